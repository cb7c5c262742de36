package dev.once.functions;

import com.google.genai.Pager;
import com.google.genai.types.BatchJob;
import dev.once.effects.Records;
import dev.once.gemini.BatchJobs;
import dev.once.key.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.ledger.LedgerRecord;
import dev.once.observe.EventLog;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
    int pendingChecked;
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
      map.put("pending_checked", pendingChecked);
      map.put("pages", pages);
      map.put("truncated", truncated);
      return map;
    }
  }

  /** @param pendingPerRun how many of this pipeline's submitted documents a run looks up itself */
  record Limits(int pageSize, int maxPages, Duration budget, Duration maxAge, int pendingPerRun) {}

  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(30);

  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<Records> records;
  private final CompletionFlow completion;
  private final Limits limits;
  private final InstantSource clock;

  ReconcileFlow(Supplier<BatchJobs> batchJobs, Supplier<Records> records, CompletionFlow completion, Limits limits,
      InstantSource clock) {
    this.batchJobs = batchJobs;
    this.records = records;
    this.completion = completion;
    this.limits = limits;
    this.clock = clock;
  }

  /**
   * Two passes within one time budget. First the pipeline's own documents still waiting for their job: the
   * listing below may never reach a job (it shows a bounded number, other applications' jobs among them), and a
   * job whose webhook was answered "in flight" by a holder that then crashed has only the reconciler left. Then
   * the listing, as the issue of record asks: every finished job it shows goes through the completion flow.
   * Throws when the first page cannot be listed; a failure on a later page ends the run with what it has.
   */
  Summary run() {
    Summary summary = new Summary();
    Instant deadline = clock.instant().plus(limits.budget());
    reconcilePending(summary, deadline);
    if (clock.instant().isAfter(deadline)) {
      summary.truncated = true;
      return summary;
    }
    Pager<BatchJob> pager = batchJobs.get().list(limits.pageSize());
    summary.pages = 1;
    while (true) {
      for (BatchJob job : pager.page()) {
        if (clock.instant().isAfter(deadline)) {
          summary.truncated = true;
          return summary;
        }
        summary.seen++;
        reconcile(job, summary, false);
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

  /** Looks up the jobs of documents still submitted; a finished one goes through the completion flow. */
  private void reconcilePending(Summary summary, Instant deadline) {
    Set<String> jobs = new LinkedHashSet<>();
    String from = java.util.HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(8)
        .putLong(java.util.concurrent.ThreadLocalRandom.current().nextLong()).array());
    for (Records.Pending pending : records.get().pendingSubmissions(limits.pendingPerRun(), from, QUERY_TIMEOUT)) {
      jobs.add(pending.job());
    }
    for (String name : jobs) {
      if (clock.instant().isAfter(deadline)) {
        summary.truncated = true;
        return;
      }
      summary.pendingChecked++;
      try {
        IdempotencyKey key = GeminiCompletionKeys.ofName(name);
        Optional<LedgerRecord> record = completion.record(key);
        if (record.isPresent()) {
          if (record.get().leaseLive()) {
            summary.inFlight++; // its holder's to finish (or, should it crash, a later run's): no call for it
          } else {
            // Begun before by a holder that failed or crashed: the claim comes first, then one look at the job,
            // so a webhook retried at this moment does not look too.
            complete(key, null, summary);
          }
          continue;
        }
        // Never begun: the job's state first. A running job costs this read, one Gemini call and no ledger write;
        // an ended one goes on to its completion without a second call.
        BatchJob job = batchJobs.get().get(name);
        if (BatchJobs.isTerminal(job)) {
          reconcile(job, summary, true);
        } else {
          summary.pending++;
        }
      } catch (RuntimeException e) {
        summary.failed++;
        EventLog.record(GeminiReconciler.NAME, "gemini:" + name, Effects.COMPLETE, EventLog.FAILED, 0, 0,
            Map.of("error", String.valueOf(e)));
      }
    }
  }

  /** @param fresh whether {@code job} comes from a batches.get just made, or from the listing, to be confirmed */
  private void reconcile(BatchJob job, Summary summary, boolean fresh) {
    if (!BatchJobs.isTerminal(job)) {
      summary.pending++;
      return;
    }
    Instant ended = job.endTime().or(job::updateTime).or(job::createTime).orElse(clock.instant());
    if (ended.isBefore(clock.instant().minus(limits.maxAge()))) {
      summary.tooOld++;
      return;
    }
    IdempotencyKey key;
    try {
      key = GeminiCompletionKeys.ofName(job.name().orElse(""));
    } catch (InvalidKey e) {
      summary.failed++;
      return;
    }
    complete(key, fresh ? job : null, summary);
  }

  /** @param ended the job as a batches.get just answered, or null to look it up once the completion is claimed */
  private void complete(IdempotencyKey key, BatchJob ended, Summary summary) {
    long started = System.nanoTime();
    try {
      EventReport report = completion.complete(key, ended);
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
