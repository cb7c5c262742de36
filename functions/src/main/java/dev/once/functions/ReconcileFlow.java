package dev.once.functions;

import com.google.genai.Pager;
import com.google.genai.types.BatchJob;
import dev.once.gemini.BatchJobs;
import dev.once.key.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.observe.EventLog;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One reconciliation run: list batch jobs a page at a time, within a bound on pages and time, and feed every
 * finished job into the completion flow — the safety net for webhooks that never came. A job the webhook already
 * completed costs one read. Jobs that ended longer ago than the ledger keeps its records are left alone: their
 * records may have expired, and completing them again would bill them again.
 */
final class ReconcileFlow {
  /** What a run saw and did; the HTTP answer. */
  static final class Summary {
    int seen;
    int processed;
    int duplicate;
    int inFlight;
    int pending;
    int rejected;
    int failed;
    int tooOld;
    int pages;
    boolean truncated;

    Map<String, Object> toMap() {
      Map<String, Object> map = new LinkedHashMap<>();
      map.put("seen", seen);
      map.put("processed", processed);
      map.put("duplicate", duplicate);
      map.put("in_flight", inFlight);
      map.put("pending", pending);
      map.put("rejected", rejected);
      map.put("failed", failed);
      map.put("too_old", tooOld);
      map.put("pages", pages);
      map.put("truncated", truncated);
      return map;
    }
  }

  record Limits(int pageSize, int maxPages, Duration budget, Duration maxAge) {}

  private final Supplier<BatchJobs> batchJobs;
  private final CompletionFlow completion;
  private final Limits limits;
  private final InstantSource clock;

  ReconcileFlow(Supplier<BatchJobs> batchJobs, CompletionFlow completion, Limits limits, InstantSource clock) {
    this.batchJobs = batchJobs;
    this.completion = completion;
    this.limits = limits;
    this.clock = clock;
  }

  /** Throws when the first page cannot be listed; a failure on a later page ends the run with what it has. */
  Summary run() {
    Summary summary = new Summary();
    Instant deadline = clock.instant().plus(limits.budget());
    Pager<BatchJob> pager = batchJobs.get().list(limits.pageSize());
    summary.pages = 1;
    while (true) {
      for (BatchJob job : pager.page()) {
        summary.seen++;
        reconcile(job, summary);
      }
      if (summary.pages >= limits.maxPages() || clock.instant().isAfter(deadline)) {
        summary.truncated = true;
        return summary;
      }
      try {
        pager.nextPage();
        summary.pages++;
      } catch (IndexOutOfBoundsException lastPage) {
        return summary;
      } catch (RuntimeException e) {
        summary.failed++;
        summary.truncated = true;
        return summary;
      }
    }
  }

  private void reconcile(BatchJob job, Summary summary) {
    if (!BatchJobs.isTerminal(job)) {
      summary.pending++;
      return;
    }
    Instant ended = job.endTime().or(job::updateTime).or(job::createTime).orElse(clock.instant());
    if (ended.isBefore(clock.instant().minus(limits.maxAge()))) {
      summary.tooOld++;
      return;
    }
    long started = System.nanoTime();
    IdempotencyKey key;
    try {
      key = GeminiCompletionKeys.ofName(job.name().orElse(""));
    } catch (InvalidKey e) {
      summary.failed++;
      return;
    }
    try {
      EventReport report = completion.complete(key);
      EventLog.record(GeminiReconciler.NAME, report.key(), report.effect(), report.outcome(), report.attempts(),
          DocumentUploaded.elapsedMs(started), Map.of("effects", report.effects()));
      switch (report.outcome()) {
        case "processed" -> summary.processed++;
        case "duplicate" -> summary.duplicate++;
        case "in_flight" -> summary.inFlight++;
        case "rejected" -> summary.rejected++;
        default -> summary.failed++;
      }
    } catch (CompletionFlow.NotFinished e) {
      summary.pending++;
    } catch (RuntimeException e) {
      summary.failed++;
      EventLog.record(GeminiReconciler.NAME, key.value(), Effects.COMPLETE, EventLog.FAILED, 0,
          DocumentUploaded.elapsedMs(started), Map.of("error", String.valueOf(e)));
    }
  }
}
