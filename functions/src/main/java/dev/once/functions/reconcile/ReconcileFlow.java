package dev.once.functions.reconcile;

import com.google.genai.Pager;
import com.google.genai.types.BatchJob;
import dev.once.budget.Budget;
import dev.once.entry.Report;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.functions.completion.CompletionFlow;
import dev.once.functions.completion.StrayJobs;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.JobStates;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.ledger.LedgerRecord;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * One reconciliation run, the safety net for webhooks that never came, in two passes within one time budget.
 * First the listing: batch jobs a page at a time, within a bound on pages, every finished one fed into the
 * completion flow (a job the webhook already completed costs one read). Then the pipeline's own documents still
 * waiting for a job the listing did not show — it shows a bounded number, other applications' jobs among them —
 * each job looked up by name. Listed jobs that ended longer ago than the ledger keeps its records are left alone:
 * their records may have expired, and completing them again would bill them again. A waiting document's job is
 * completed whatever its age: the document was never completed, since a completion moves it on in its commit.
 * Then, in batch mode, queued documents are gathered into jobs ({@link BatchSubmitter}): after the completions, which
 * free places among the jobs in flight. Last, with what is left of the time budget, documents deferred for want of budget are resumed, oldest first, as
 * long as the day's budget takes them (none when it is used up: one read says so).
 */
public final class ReconcileFlow {
  /** The function the reconciler runs in, as its log lines name it. */
  public static final String FUNCTION = "GeminiReconciler";

  /**
   * @param runTime how long a run starts new work (checked before each job)
   * @param maxAge how long ago a listed job may have ended and still be completed (the ledger's retention)
   * @param pendingPerRun how many of this pipeline's submitted documents a run looks up itself
   * @param resumePerRun how many deferred documents a run resumes at most
   */
  public record Limits(int pageSize, int maxPages, Duration runTime, Duration maxAge, int pendingPerRun,
      int resumePerRun) {
    /**
     * A deployed run: 50 jobs a page, 20 pages, 2 minutes, well inside the reconciler's timeout; 100 waiting documents
     * looked up when the listing did not show their jobs (a random slice), 100 deferred ones resumed, oldest first.
     */
    public static Limits deployed(Duration maxAge) {
      return new Limits(50, 20, Duration.ofMinutes(2), maxAge, 100, 100);
    }
  }

  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<RecordQueries> queries;
  private final CompletionFlow completion;
  private final Supplier<BatchSubmitter> submitter;
  private final Limits limits;
  private final InstantSource clock;
  private final Log log;
  private final StrayJobs strays;
  private final DeferredResumption deferred;

  public ReconcileFlow(Supplier<BatchJobs> batchJobs, Supplier<RecordQueries> queries, Supplier<Gatherings> gatherings,
      CompletionFlow completion, Supplier<DocumentFlow> documents, Supplier<BatchSubmitter> submitter, Budget spending,
      Limits limits, InstantSource clock, Log log) {
    this.submitter = submitter;
    this.batchJobs = batchJobs;
    this.queries = queries;
    this.completion = completion;
    this.limits = limits;
    this.clock = clock;
    this.log = log;
    this.strays = new StrayJobs(batchJobs, queries, gatherings, log);
    this.deferred = new DeferredResumption(queries, documents, spending, limits.resumePerRun(), clock, log);
  }

  /**
   * Throws when the first page cannot be listed; a failure on a later page, or in the second pass, ends the run
   * with what it has.
   */
  public ReconcileSummary run() {
    ReconcileSummary summary = new ReconcileSummary();
    Instant deadline = clock.instant().plus(limits.runTime());
    Set<String> listed = new HashSet<>();
    // A listing cut short by its page bound is what the second pass is for; only the time budget ends the run.
    summary.truncated = !reconcileListed(summary, deadline, listed);
    if (clock.instant().isAfter(deadline)) {
      summary.truncated = true;
      return summary;
    }
    reconcileWaiting(summary, deadline, listed);
    if (clock.instant().isAfter(deadline)) {
      summary.truncated = true;
      return summary;
    }
    // After the completions, which free places for jobs in flight.
    submitJobs(summary);
    deferred.resume(summary, deadline);
    return summary;
  }

  /**
   * Batch mode's gathering: interrupted submissions first (their documents waited longest), then the jobs due (full, or
   * whose oldest document waited long enough). A failure ends this pass only; the next run tries again.
   */
  private void submitJobs(ReconcileSummary summary) {
    try {
      summary.gatheringsResumed += submitter.get().resumeUnsubmitted();
      summary.jobsSubmitted += submitter.get().submitDue();
    } catch (RuntimeException e) {
      summary.failed++;
      log.error("the reconciler could not submit the batch jobs due",
          Map.of("function", FUNCTION, "error", String.valueOf(e)));
    }
  }

  /** The listing pass; false when it stopped before the last page. Adds the names of the jobs it dealt with to listed. */
  private boolean reconcileListed(ReconcileSummary summary, Instant deadline, Set<String> listed) {
    Pager<BatchJob> pager = batchJobs.get().list(limits.pageSize());
    summary.pages = 1;
    while (true) {
      for (BatchJob job : pager.page()) {
        if (clock.instant().isAfter(deadline)) {
          return false;
        }
        summary.seen++;
        if (reconcile(job, summary)) {
          job.name().ifPresent(listed::add);
        }
      }
      if (summary.pages >= limits.maxPages() || clock.instant().isAfter(deadline)) {
        return false;
      }
      try {
        pager.nextPage();
        summary.pages++;
      } catch (IndexOutOfBoundsException lastPage) {
        return true;
      } catch (RuntimeException e) {
        summary.failed++;
        return false;
      }
    }
  }

  /**
   * The waiting documents' jobs the listing did not show (a random slice of them, see RecordWrites). One read of
   * the job's completion record says what to do: held by another process → left to it; begun before (by a holder
   * that failed or crashed) → the completion flow, which claims before it looks the job up, so a webhook retried
   * at this moment does not look too; never begun → the job's state first: a running job costs the read and one
   * Gemini call and no ledger write, an ended one goes on to its completion without a second call.
   */
  private void reconcileWaiting(ReconcileSummary summary, Instant deadline, Set<String> listed) {
    Set<String> jobs = new LinkedHashSet<>();
    try {
      String from = HexFormat.of().formatHex(ByteBuffer.allocate(Long.BYTES)
          .putLong(ThreadLocalRandom.current().nextLong()).array());
      for (RecordQueries.Pending pending : queries.get().pendingSubmissions(limits.pendingPerRun(), from)) {
        if (!listed.contains(pending.job())) {
          jobs.add(pending.job());
        }
      }
    } catch (RuntimeException e) {
      summary.failed++;
      summary.truncated = true;
      log.error("the reconciler could not read the waiting documents",
          Map.of("function", FUNCTION, "error", String.valueOf(e)));
      return;
    }
    for (String name : jobs) {
      if (clock.instant().isAfter(deadline)) {
        summary.truncated = true;
        return;
      }
      summary.pendingChecked++;
      IdempotencyKey key;
      try {
        key = GeminiCompletionKeys.ofName(name);
      } catch (InvalidKey e) {
        // A name that makes no key (a record not to be trusted): logged by its first characters.
        summary.failed++;
        EventLog.record(log, FUNCTION, null, Effects.COMPLETE, OutcomeLabel.FAILED, 0, 0,
            Map.of("job", IdempotencyKey.preview(name), "error", String.valueOf(e)));
        continue;
      }
      try {
        Optional<LedgerRecord> record = completion.record(key);
        if (record.isPresent() && record.get().leaseLive()) {
          summary.inFlight++;
        } else if (record.isPresent()) {
          complete(key, () -> completion.complete(key), summary);
        } else {
          lookUpAndReconcile(key, name, summary);
        }
      } catch (RuntimeException e) {
        summary.failed++;
        EventLog.record(log, FUNCTION, key.value(), Effects.COMPLETE, OutcomeLabel.FAILED, 0, 0,
            Map.of("error", String.valueOf(e)));
      }
    }
  }

  private void lookUpAndReconcile(IdempotencyKey key, String name, ReconcileSummary summary) {
    Optional<BatchJob> found = batchJobs.get().find(name);
    if (found.isEmpty() || JobStates.isTerminal(found.get())) {
      // Ended, whatever its age: a document still waiting was never completed (a completion moves it on in the
      // same commit), so this cannot bill it twice. Or gone from Gemini: the completion fails its documents,
      // saying why. Either way completed from this answer, without a second look.
      complete(key, () -> completion.complete(key, found), summary);
    } else {
      summary.pending++;
    }
  }

  /**
   * A job from the listing: if it has ended, and not too long ago, the completion flow confirms and completes it.
   * False when it was left as too old: a waiting document of it is then the second pass's to complete.
   */
  private boolean reconcile(BatchJob job, ReconcileSummary summary) {
    if (!JobStates.isTerminal(job)) {
      summary.pending++;
      try {
        if (strays.cancelIfStray(job, clock.instant())) {
          summary.cancelled++;
        }
      } catch (RuntimeException e) {
        summary.failed++;
      }
      return true;
    }
    Instant ended = job.endTime().or(job::updateTime).or(job::createTime).orElse(clock.instant());
    if (ended.isBefore(clock.instant().minus(limits.maxAge()))) {
      summary.tooOld++;
      return false;
    }
    IdempotencyKey key;
    try {
      key = GeminiCompletionKeys.ofName(job.name().orElse(""));
    } catch (InvalidKey e) {
      summary.failed++;
      return true;
    }
    complete(key, () -> completion.complete(key), summary);
    return true;
  }

  /** Runs one completion, logs it and counts its outcome. */
  private void complete(IdempotencyKey key, Supplier<Report> completing, ReconcileSummary summary) {
    long started = System.nanoTime();
    try {
      Report report = completing.get();
      if (report.outcome() == OutcomeLabel.DUPLICATE) {
        // Found again by this poller, not redelivered by the platform: kept out of the duplicate rate.
        report = report.as(OutcomeLabel.RELISTED);
      }
      report.log(log, FUNCTION, started);
      switch (report.outcome()) {
        case PROCESSED -> summary.processed++;
        case RELISTED -> summary.relisted++;
        case IN_FLIGHT -> summary.inFlight++;
        case REJECTED -> summary.rejected++;
        default -> summary.failed++;
      }
    } catch (CompletionFlow.NotFinished e) {
      summary.pending++;
    } catch (RuntimeException e) {
      summary.failed++;
      EventLog.record(log, FUNCTION, key.value(), Effects.COMPLETE, OutcomeLabel.FAILED, 0,
          EventLog.elapsedMs(started), Map.of("error", String.valueOf(e)));
    }
  }
}
