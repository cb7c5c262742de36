package dev.once.functions.gathering;

import dev.once.budget.Budget;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.CostEstimator;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Forms batch jobs from queued documents (batch mode): a job is due when the queue holds a full job (documents or
 * bytes) or its oldest document has waited {@code maxWait}. A due job is a gathering ({@link Gatherings}): opened if
 * fewer than {@code maxInFlight} jobs are in flight, given the oldest queued documents (each joins one gathering at
 * most, by a write conditional on its own analysis), then submitted: its documents are read, its membership sealed
 * (their ids recorded on the gathering: the job's documents, whatever is assigned later), and read as the job's
 * requests. Only its opener assigns documents, within moments of opening it; the reconciler resumes a submission only
 * once it is older than a submission's lease. An opener stalled past that lease may still assign one after the seal:
 * the reconciler finds it gathered into a gathering it is no member of, and queues it again ({@link #recoverStrays}).
 *
 * <p>What a gathering's submission does, the paid effect, is {@link JobSubmission}'s.
 */
public final class BatchSubmitter {
  /** Jobs one call submits at most, so a reconciler run or an upload stays bounded however long the queue. */
  static final int MAX_JOBS_PER_CALL = 20;
  /** Gatherings one call opens and closes empty at most, before it leaves the queue to the next call. */
  static final int MAX_LOST = 3;
  /** Gathered documents a reconciler run checks against their gatherings, from a random point (see recoverStrays). */
  static final int GATHERED_PER_RUN = 500;

  /**
   * @param maxDocuments documents per job
   * @param maxBytes the documents' bytes per job (inlined under Gemini's 20 MB, else in an input file)
   * @param maxWait how long the oldest queued document waits for a job to fill before one is made anyway
   * @param maxInFlight jobs open, submitted or running at once (Gemini allows 100 per project)
   * @param timeout a paid call's timeout, which the submission's lease outlasts (with time to read the documents)
   */
  public record Limits(int maxDocuments, long maxBytes, Duration maxWait, int maxInFlight, Duration timeout,
      long maxDocumentBytes) {
    /** A submission's lease: reading the documents (up to a job's bytes from Storage) comes before the paid call. */
    Duration submissionLease() {
      return timeout.plus(timeout).plus(DocumentReader.PAID_LEASE_MARGIN);
    }
  }

  private final Once once;
  private final Supplier<Gatherings> gatherings;
  private final Supplier<RecordQueries> queries;
  private final Limits limits;
  private final InstantSource clock;
  private final JobSubmission submission;
  /** Before this, no queued document this instance could know of has waited long enough ({@link #submitIfDue}). */
  private volatile Instant oldestDueAt = Instant.MIN;

  /** Without a spending guard: every member's job is made without reserving. */
  public BatchSubmitter(Once once, Supplier<Gatherings> gatherings, Supplier<RecordQueries> queries,
      Supplier<RecordWrites> records, Supplier<DocumentReader> reader, Supplier<BatchJobs> batchJobs,
      ResultPublication publication, Limits limits, InstantSource clock) {
    this(once, gatherings, queries, records, reader, batchJobs, publication, limits, clock, Budget.NONE, () -> null);
  }

  /**
   * @param budget reserves for a member that holds no reservation (its last one was settled to an answer Google billed
   *     that could not be used), as its first queueing did
   */
  public BatchSubmitter(Once once, Supplier<Gatherings> gatherings, Supplier<RecordQueries> queries,
      Supplier<RecordWrites> records, Supplier<DocumentReader> reader, Supplier<BatchJobs> batchJobs,
      ResultPublication publication, Limits limits, InstantSource clock, Budget budget,
      Supplier<CostEstimator> estimator) {
    this.once = once;
    this.gatherings = gatherings;
    this.queries = queries;
    this.limits = limits;
    this.clock = clock;
    this.submission = new JobSubmission(once, gatherings, queries, records,
        new JobRequests(records, reader, limits.maxDocumentBytes(), budget, estimator), batchJobs, publication, limits);
  }

  /**
   * What an upload runs after queueing its document: one small read tells whether a job is due before a job's worth of
   * documents is read — a count of the queue up to a job's worth (an aggregation: one read). Whether the oldest queued
   * document has waited long enough takes a read of it, made only when this instance cannot tell without: the oldest
   * it last read (or the empty queue it last saw) bounds the queue's oldest from below, since a document queued later
   * is younger, so until that one's wait is over only a full job can be due. A document put back in the queue with
   * its old place (a job gave it no answer, it strayed, it waited for the budget) is the exception: an instance whose
   * bound is still ahead does not look for it; the reconciler's next run makes its job, or an upload on an instance
   * that looks again (at most {@code maxWait} later). A job full by bytes alone is left to the reconciler's run.
   */
  public int submitIfDue() {
    Instant now = clock.instant();
    if (now.isBefore(oldestDueAt)) {
      return queries.get().queuedCount(limits.maxDocuments()) < limits.maxDocuments() ? 0 : submitDue(null);
    }
    List<RecordQueries.Queued> queue = queries.get().queued(1);
    if (queue.isEmpty()) {
      oldestDueAt = now.plus(limits.maxWait());
      return 0;
    }
    RecordQueries.Queued oldest = queue.get(0);
    if (!oldest.back() && oldest.queuedAt().plus(limits.maxWait()).isAfter(now)) {
      oldestDueAt = oldest.queuedAt().plus(limits.maxWait());
      if (queries.get().queuedCount(limits.maxDocuments()) < limits.maxDocuments()) {
        return 0;
      }
    }
    return submitDue(oldest);
  }

  /** Submits the jobs that are due, up to {@link #MAX_JOBS_PER_CALL}; returns how many it submitted. */
  public int submitDue() {
    return submitDue(null);
  }

  /**
   * @param known the queue's oldest document as just read (null: read it here). Each job is formed in the gathering
   *     named after the oldest document ({@link Gatherings#nameFor}): of submitters racing for the same job one opens
   *     it, and the others stop before reading the queue (DESIGN.md, "What a gathering reads and writes").
   */
  private int submitDue(RecordQueries.Queued known) {
    int submitted = 0;
    int lost = 0;
    RecordQueries.Queued oldest = known;
    while (submitted < MAX_JOBS_PER_CALL) {
      if (oldest == null) {
        List<RecordQueries.Queued> queue = queries.get().queued(1);
        if (queue.isEmpty()) {
          break;
        }
        oldest = queue.get(0);
      }
      // A count first, so a full pipeline costs one read per call; then the opening, which keeps the cap exactly.
      if (gatherings.get().inFlight() >= limits.maxInFlight()) {
        once.log().info("batch jobs wait for room", Map.of("maxInFlight", limits.maxInFlight()));
        break;
      }
      String id = Gatherings.nameFor(oldest);
      // An opener assigns within moments of opening: one still open after a submission's lease has stopped.
      Instant staleBefore = clock.instant().minus(limits.submissionLease());
      Gatherings.Opening opening = gatherings.get().open(id, limits.maxInFlight(), staleBefore);
      if (opening == Gatherings.Opening.ENDED) {
        // Its gathering ended without it (closed empty), or its opener stopped before assigning it: another name.
        id = newId();
        opening = gatherings.get().open(id, limits.maxInFlight(), staleBefore);
      }
      if (opening == Gatherings.Opening.TAKEN) {
        break; // another submitter forms this job
      }
      if (opening == Gatherings.Opening.FULL) {
        once.log().info("batch jobs wait for room", Map.of("maxInFlight", limits.maxInFlight()));
        break;
      }
      oldest = null;
      List<RecordQueries.Queued> job = dueJob(queries.get().queued(limits.maxDocuments()));
      int held = job.isEmpty() ? 0 : gatherings.get().assign(id, job);
      if (held == 0) {
        // No job is due any more (others took it), or the oldest document changed since the queue was read. The
        // gathering is closed either way; the queue is read again, and holds no due job in the first case. Stopping
        // in the second left a due job to the reconciler's next run.
        gatherings.get().close(id);
        if (job.isEmpty() || ++lost == MAX_LOST) {
          break;
        }
        continue;
      }
      Outcome outcome = submit(id);
      once.log().info("gathered a batch job", Map.of("gathering", id, "documents", held,
          "outcome", outcome.getClass().getSimpleName()));
      if (!(outcome instanceof Outcome.Processed)) {
        break; // Gemini did not take it (no room, an outage): the next call tries again
      }
      submitted++;
    }
    return submitted;
  }

  /**
   * Gatherings whose job is not made yet and that were opened longer ago than a submission's lease: their submitter
   * stopped (crashed, or Gemini had no room). Submitted again, which adopts the job an earlier try made, if any.
   */
  public int resumeUnsubmitted() {
    try {
      recoverStrays();
    } catch (RuntimeException e) {
      once.log().error("could not look for documents gathered after their gathering was sealed",
          Map.of("error", String.valueOf(e)));
    }
    int resumed = 0;
    Instant before = clock.instant().minus(limits.submissionLease());
    for (Gatherings.Unsubmitted gathering : gatherings.get().unsubmitted(limits.maxInFlight())) {
      try {
        if (gathering.openedAt().isBefore(before) && submit(gathering.id()) instanceof Outcome.Processed) {
          resumed++;
        }
      } catch (RuntimeException e) {
        // One gathering that keeps failing (a member that cannot be read) must not keep the others from their jobs.
        once.log().error("could not resume a gathering's submission; the next run tries again",
            Map.of("gathering", gathering.id(), "error", String.valueOf(e)));
      }
    }
    return resumed;
  }

  /**
   * Documents gathered into a gathering they are not members of, put back in the queue: assigned after its submission
   * sealed it (a stalled opener), or after it was closed. A member of a submitted gathering still {@code gathered}
   * (its submitter stopped after the commit) is told its job. A gathering still unsealed is left to its submission.
   * A slice of the gathered documents per run, from a random point, so over a few runs every one is looked at;
   * each gathering is read once a run. Returns how many went back in the queue.
   */
  int recoverStrays() {
    String from = HexFormat.of().formatHex(ByteBuffer.allocate(Long.BYTES)
        .putLong(ThreadLocalRandom.current().nextLong()).array());
    Map<String, Gatherings.State> read = new HashMap<>();
    Map<String, Set<String>> members = new HashMap<>();
    int requeued = 0;
    for (RecordQueries.Gathered document : queries.get().gathered(GATHERED_PER_RUN, from)) {
      Gatherings.State gathering = read.computeIfAbsent(document.gathering(), gatherings.get()::state);
      boolean open = Gatherings.OPEN.equals(gathering.state());
      if (open && !gathering.sealed()) {
        continue; // its submission reads it
      }
      boolean member = gathering.sealed() && members.computeIfAbsent(document.gathering(),
          id -> Set.copyOf(gathering.members())).contains(document.documentId());
      if (!member) {
        if (gatherings.get().requeue(document.documentId(), document.updateTime())) {
          requeued++;
          once.log().write("WARNING", "a document gathered after its gathering was sealed is queued again",
              Map.of("gathering", document.gathering(), "document", document.documentId()));
        }
      } else if (gathering.job() != null) {
        try {
          gatherings.get().markSubmitted(document.documentId(), gathering.job(), document.updateTime()).get();
        } catch (Exception e) {
          // moved on meanwhile, or the next run tries again
        }
      }
    }
    return requeued;
  }

  /**
   * The oldest queued documents that fit one job, if a job is due: the queue (oldest first, at most a job's worth)
   * holds a full job, or its oldest document waited long enough. Empty when none is due.
   */
  List<RecordQueries.Queued> dueJob(List<RecordQueries.Queued> queue) {
    List<RecordQueries.Queued> job = new ArrayList<>();
    long bytes = 0;
    int most = limits.maxDocuments();
    for (RecordQueries.Queued document : queue) {
      int bound = document.jobLimit() > 0 ? Math.min(most, document.jobLimit()) : most;
      if (!job.isEmpty() && (bytes + document.size() > limits.maxBytes() || job.size() >= bound)) {
        return job; // full by bytes, or by the bound of a document Gemini refused a larger job of
      }
      job.add(document);
      bytes += document.size();
      most = bound;
      if (job.size() >= most) {
        return job;
      }
    }
    boolean full = job.size() >= most || bytes >= limits.maxBytes();
    // The oldest waited long enough; or it is back after a job that did not answer it, and waited a job already.
    boolean waitedEnough = !job.isEmpty() && (job.get(0).back()
        || !job.get(0).queuedAt().plus(limits.maxWait()).isAfter(clock.instant()));
    return full || waitedEnough ? job : List.of();
  }

  /** The gathering's submission ({@link JobSubmission#submit}): at most one paid job whoever runs it. */
  Outcome submit(String id) {
    return submission.submit(id);
  }

  private static String newId() {
    return UUID.randomUUID().toString().replace("-", ""); // 32 hex digits, within the Files API's 40-character names
  }
}
