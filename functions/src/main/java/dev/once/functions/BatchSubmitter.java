package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.budget.Budget;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiErrors;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.Records;
import dev.once.pipeline.ResultMessage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
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
 * <p>The submission is a paid effect run through {@link Once}, keyed by the gathering's id: one {@code batches.create}
 * whose display name names the gathering, so a retry after a try that may have made the job (an answer late, reset,
 * 5xx, 429) adopts it by that name instead of paying for a second. Its commit records the job on the gathering (the
 * completion goes by the gathering's members), a bounded commit whatever the job's size; each member's analysis is
 * then told its job, conditionally, outside it. Gemini's refusals that rule the job out free the try; the others leave
 * it counted, and the gathering waits (the reconciler retries it, looking first): a document is never failed for want
 * of capacity, and no try counts against a cap, since a retry that looks first cannot pay twice.
 *
 * <p>A refusal of the whole job is the job's, never its members': too large inlined, it is sent from an input file;
 * too large even so, or refused for what a document holds without naming it, its members go back to the queue for
 * jobs of half as many (a document alone in a job refused so is refused itself); only a refusal naming one request
 * refuses that document. Documents run again after a job gave them no answer that could be matched go in a job made
 * from an input file, and a document back in the queue makes a job due at once.
 */
final class BatchSubmitter {
  /** The key prefix of a gathering's submission in the ledger. */
  static final String KEY_PREFIX = "batch:";
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
  record Limits(int maxDocuments, long maxBytes, Duration maxWait, int maxInFlight, Duration timeout,
      long maxDocumentBytes) {}

  private final Once once;
  private final Supplier<Gatherings> gatherings;
  private final Supplier<RecordQueries> queries;
  private final Supplier<Records> records;
  private final Supplier<DocumentReader> reader;
  private final Supplier<BatchJobs> batchJobs;
  private final ResultPublication publication;
  private final Limits limits;
  private final InstantSource clock;
  private final Budget budget;
  private final Supplier<CostEstimator> estimator;
  /** Before this, no queued document this instance could know of has waited long enough ({@link #submitIfDue}). */
  private volatile Instant oldestDueAt = Instant.MIN;

  /** Without a spending guard: every member's job is made without reserving. */
  BatchSubmitter(Once once, Supplier<Gatherings> gatherings, Supplier<RecordQueries> queries,
      Supplier<Records> records, Supplier<DocumentReader> reader, Supplier<BatchJobs> batchJobs,
      ResultPublication publication, Limits limits, InstantSource clock) {
    this(once, gatherings, queries, records, reader, batchJobs, publication, limits, clock, Budget.NONE, () -> null);
  }

  /**
   * @param budget reserves for a member that holds no reservation (its last one was settled to an answer Google billed
   *     that could not be used), as its first queueing did
   */
  BatchSubmitter(Once once, Supplier<Gatherings> gatherings, Supplier<RecordQueries> queries,
      Supplier<Records> records, Supplier<DocumentReader> reader, Supplier<BatchJobs> batchJobs,
      ResultPublication publication, Limits limits, InstantSource clock, Budget budget,
      Supplier<CostEstimator> estimator) {
    this.budget = budget;
    this.estimator = estimator;
    this.once = once;
    this.gatherings = gatherings;
    this.queries = queries;
    this.records = records;
    this.reader = reader;
    this.batchJobs = batchJobs;
    this.publication = publication;
    this.limits = limits;
    this.clock = clock;
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
  int submitIfDue() {
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
  int submitDue() {
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
      Instant staleBefore = clock.instant().minus(lease());
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
  int resumeUnsubmitted() {
    try {
      recoverStrays();
    } catch (RuntimeException e) {
      once.log().error("could not look for documents gathered after their gathering was sealed",
          Map.of("error", String.valueOf(e)));
    }
    int resumed = 0;
    Instant before = clock.instant().minus(lease());
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

  /**
   * The gathering's submission, at most one paid job whoever runs it and however often. Its opener has assigned its
   * documents before; a resumed one (opened longer ago than a submission's lease) gets none added.
   */
  Outcome submit(String id) {
    List<RecordQueries.Submitted> inJob = new ArrayList<>();
    Outcome outcome = once.run(IdempotencyKey.of(KEY_PREFIX + id), Effects.SUBMIT,
        Policy.DEFAULT.leaseAtLeast(lease()), attempt -> create(attempt, id, inJob));
    if (outcome instanceof Outcome.Processed processed && processed.result().get("job") instanceof String job) {
      gatherings.get().markSubmitted(job, inJob);
    }
    return outcome;
  }

  /** @param inJob filled with the documents the job was made for, as read */
  private Completion create(Attempt attempt, String id, List<RecordQueries.Submitted> inJob) throws Refusal {
    List<RecordQueries.Submitted> gathered = queries.get().gatheredIn(id);
    Gatherings.State gathering = seal(id, gathered);
    List<RecordQueries.Submitted> members = gathering == null ? List.of() : sealed(gathering, gathered);
    if (members.isEmpty()) {
      // Its documents went to another job (a concurrent submitter), or its submitter crashed before assigning any.
      return Completion.of(Map.of("gathering", id, "documents", 0), Gatherings.done(id));
    }
    List<SideWrites> writes = new ArrayList<>();
    inJob.clear();
    BatchJob job = earlierJob(attempt, id);
    if (job != null) {
      // The adopted job holds every member the earlier try did not refuse (it read them all; one it could not read
      // got no answer, and its completion runs it again). Those it refused were published then: recorded again now.
      for (RecordQueries.Submitted member : members) {
        String refusal = gathering.refused().get(member.documentKey().documentId());
        if (refusal == null) {
          inJob.add(member);
        } else {
          writes.add(records.get().rejected(member.documentKey(), member.source(), "refused before its batch job was"
              + " made: " + refusal).and(member.reservation().release()));
        }
      }
    } else {
      job = createJob(attempt, id, members, inJob, writes);
      if (job == null) {
        return Completion.of(Map.of("gathering", id, "documents", 0), SideWrites.all(writes).and(Gatherings.done(id)));
      }
    }
    String name = job.name().orElseThrow(() -> new IllegalStateException("Gemini created a batch job without a name"));
    writes.add(Gatherings.submitted(id, name, inJob.size()));
    return Completion.of(Map.of("gathering", id, "job", name, "documents", inJob.size()), SideWrites.all(writes));
  }

  /**
   * Reads the members, refuses those that are gone, too large or empty (published, then recorded on the gathering
   * before anything is asked of Gemini), and makes the job of the others; fills {@code inJob} with them. Null when no
   * job was made and none is to be: no member left, or Gemini refused the job for its size, which puts its members
   * back in the queue for smaller jobs ({@code writes} say so). Throws what may have made a job, to count the try.
   */
  private BatchJob createJob(Attempt attempt, String id, List<RecordQueries.Submitted> members,
      List<RecordQueries.Submitted> inJob, List<SideWrites> writes) throws Refusal {
    List<BatchJobs.Request> requests = new ArrayList<>();
    Map<String, String> refused = new LinkedHashMap<>();
    for (RecordQueries.Submitted member : members) {
      Refused refusal = read(id, member, requests);
      if (refusal != null) {
        refuse(member, refusal, refused, writes);
      } else if (reserved(member, requests.get(requests.size() - 1), writes)) {
        inJob.add(member);
      } else {
        requests.remove(requests.size() - 1); // it waits in the queue for the day's budget, as it waited to be queued
      }
    }
    // Documents run again go in an input file: its lines' keys came back more dependably than inlined metadata.
    BatchJobs.Input how = inJob.stream().anyMatch(RecordQueries.Submitted::rerun) ? BatchJobs.Input.FILE
        : BatchJobs.Input.INLINED_WHEN_SMALL;
    while (!requests.isEmpty()) {
      recordRefusals(id, refused);
      attempt.ensureLease(limits.timeout());
      RuntimeException lastRefusal;
      try {
        // The lease is made to outlast batches.create itself, after an input file's upload.
        return batchJobs.get().submit(id, requests, how, file -> {
          attempt.ensureLease(limits.timeout());
          file.ifPresent(name -> recordInput(id, name));
        });
      } catch (BatchJobs.InputTooLarge e) {
        lastRefusal = e; // nothing uploaded, nothing asked: fewer documents a job, as for a job refused for its size
      } catch (RuntimeException e) {
        throwUnlessRefusedHere(id, e);
        lastRefusal = e;
      }
      // Refused outright (nothing was made): by what Gemini said, one document's fault, or the job's size.
      OptionalInt named = GeminiErrors.refusedRequest(lastRefusal);
      if (named.isPresent() && named.getAsInt() < requests.size()) {
        RecordQueries.Submitted member = inJob.remove(named.getAsInt());
        requests.remove(named.getAsInt());
        refuse(member, new Refused(GeminiErrors.describe(lastRefusal), Refused.BY_GEMINI), refused, writes);
      } else if (GeminiErrors.tooLarge(lastRefusal) && how != BatchJobs.Input.FILE) {
        how = BatchJobs.Input.FILE; // over the inline limit after all: the same requests from a file
      } else if (inJob.size() > 1) {
        // Too large, or refused for what one of them holds without saying which: smaller jobs, until one is alone.
        int bound = (inJob.size() + 1) / 2;
        for (RecordQueries.Submitted member : inJob) {
          writes.add(records.get().requeued(member, "Gemini refused a job of " + inJob.size() + " documents holding it ("
              + GeminiErrors.describe(lastRefusal) + "): it goes into a job of at most " + bound, member.reruns(), bound));
        }
        inJob.clear();
        return null;
      } else {
        // Alone in its job: its own fault.
        refuse(inJob.remove(0), new Refused(GeminiErrors.describe(lastRefusal), Refused.BY_GEMINI), refused, writes);
        requests.clear();
      }
    }
    return null;
  }

  /**
   * Returns when batches.create refused the job outright (nothing was made) for its size or for what a document holds
   * (the caller makes smaller jobs, or refuses that document), after logging Google's message. Throws anything else:
   * another outright refusal (a configuration problem, say) as not performed, to be tried later; what may have made
   * the job as it is, to count the try (the next one looks for the job first).
   */
  private void throwUnlessRefusedHere(String id, RuntimeException e) {
    if (e instanceof BatchJobs.NotSubmitted) {
      throw Refusal.notPerformed(e.getMessage(), e); // its input was not stored: no job asked for, none made
    }
    if (!GeminiErrors.certainlyNotCreated(e) && !GeminiErrors.tooLarge(e)) {
      throw e;
    }
    String reason = GeminiErrors.describe(e);
    once.log().write("WARNING", "batches.create refused the whole job", Map.of("gathering", id, "error", reason));
    if (!GeminiErrors.refusedRequest(e).isPresent() && !GeminiErrors.tooLarge(e) && !GeminiErrors.isPermanent(e)) {
      throw Refusal.notPerformed(reason, e);
    }
  }

  /**
   * A member refused before its job was made: published now, recorded in the submission's commit. The gathering keeps
   * the kind of it in a word or two: 5,000 members' ids and words stay well inside a document's 1 MiB, whatever Google's
   * message says; the message itself goes to the member's analysis, bounded, and to its result.
   */
  private void refuse(RecordQueries.Submitted member, Refused why, Map<String, String> refused,
      List<SideWrites> writes) {
    publishRefusal(member, why.reason());
    refused.put(member.documentKey().documentId(), why.kind());
    writes.add(records.get().rejected(member.documentKey(), member.source(), why.reason())
        .and(member.reservation().release()));
  }

  /** Records the input file on the gathering before batches.create (nothing asked of Gemini yet when it fails). */
  private void recordInput(String id, String fileName) {
    try {
      gatherings.get().recordInput(id, fileName);
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not record the input file of the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /** Records the refusals on the gathering before batches.create, for a try that adopts the job to go by. */
  private void recordRefusals(String id, Map<String, String> refused) {
    if (refused.isEmpty()) {
      return;
    }
    try {
      gatherings.get().refuse(id, refused);
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not record the refusals of the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /**
   * Seals the gathering with the documents gathered into it, unless an earlier try did; returns it as sealed (null
   * when none is gathered and it was never sealed).
   */
  private Gatherings.State seal(String id, List<RecordQueries.Submitted> gathered) {
    if (gathered.isEmpty()) {
      return null;
    }
    try {
      return gatherings.get().seal(id, gathered.stream().map(member -> member.documentKey().documentId()).toList());
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not seal the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /**
   * The gathered documents that are the job's: those the gathering was sealed with, by this try or an earlier one
   * (which may have made the job with them). A document gathered after the seal is not among them.
   */
  private static List<RecordQueries.Submitted> sealed(Gatherings.State gathering,
      List<RecordQueries.Submitted> gathered) {
    Set<String> members = Set.copyOf(gathering.members());
    return gathered.stream().filter(member -> members.contains(member.documentKey().documentId())).toList();
  }

  /**
   * Why a member is refused before its job is made: the words its analysis and its result carry, and the kind of it
   * in a word or two, which its gathering keeps.
   */
  record Refused(String reason, String kind) {
    static final String BY_GEMINI = "refused by Gemini";
  }

  /** Adds the member's request; returns why it is refused instead (gone, or grown), or throws to try later. */
  private Refused read(String id, RecordQueries.Submitted member, List<BatchJobs.Request> requests) {
    try {
      byte[] content = reader.get().read(member.source(), limits.maxDocumentBytes());
      if (content.length == 0) {
        return new Refused("the document is empty", "empty");
      }
      requests.add(BatchJobs.Request.of(id, member.documentKey(), content, DocumentFlow.mimeType(member.source())));
      return null;
    } catch (DocumentReader.Gone e) {
      return new Refused(e.getMessage(), "gone");
    } catch (DocumentReader.TooLarge e) {
      return new Refused(e.getMessage(), "too large");
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not read " + member.documentKey().value() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether the member may go into the job: with a daily budget, a member holding no reservation (its last one was
   * settled to an answer Google billed that could not be used) reserves as its first queueing did — the model's
   * ceiling far from the day's edge, else its counted tokens — recorded in the submission's commit, which the job's
   * completion settles. Refused today, it goes back to the queue (not counted as a try) and waits for the budget.
   */
  private boolean reserved(RecordQueries.Submitted member, BatchJobs.Request request, List<SideWrites> writes) {
    if (!budget.capped() || !member.reservation().none()) {
      return true;
    }
    try {
      OptionalLong ceiling = estimator.get().ceiling(true);
      long estimate = ceiling.isPresent() && budget.farFromTheEdge(ceiling.getAsLong()) ? ceiling.getAsLong()
          : estimator.get().microUsd(request.content(), request.mimeType(), true);
      writes.add(records.get().reserved(member.documentKey(),
          budget.reserve(member.documentKey(), estimate, reason -> SideWrites.NONE)));
      return true;
    } catch (Refusal e) {
      if (!e.is(Refusal.Kind.DEFERRED)) {
        throw e;
      }
      writes.add(records.get().requeued(member, "waiting for the day's budget to run it again: " + e.getMessage(),
          member.reruns(), 0));
      return false;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not estimate what running " + member.documentKey().logHash()
          + " again costs: " + GeminiErrors.describe(e), e);
    }
  }

  /** The job an earlier try may have made (null: none may have, or none was), found by its display name. */
  private BatchJob earlierJob(Attempt attempt, String id) {
    if (attempt.earlierTriesThatMayHaveRun() == 0) {
      return null;
    }
    try {
      BatchJob found = batchJobs.get().findGathered(id).orElse(null);
      if (found != null) {
        once.log().info("adopted the batch job an earlier try made", Map.of("gathering", id,
            "job", found.name().orElse("?"), "attempt", attempt.number()));
      }
      return found;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not look for the batch job an earlier try may have made: "
          + GeminiErrors.describe(e), e);
    }
  }

  /**
   * Publishes a member's refusal before the commit that records it: once that commit lands nothing runs this
   * submission again, so a refusal published after it would be lost with a crash in between. Published first, a
   * crash only repeats it, which its own publish claim absorbs (the refusal is final: the generation is gone, too
   * large, or refused by Gemini). Not published now, the submission is not performed and is tried again.
   */
  private void publishRefusal(RecordQueries.Submitted member, String reason) {
    Outcome published = publication.publish(member.documentKey(),
        ResultMessage.rejected(member.documentKey(), member.source(), reason));
    if (!(published instanceof Outcome.Processed) && !(published instanceof Outcome.Duplicate)) {
      throw Refusal.notPerformed("could not publish the refusal of " + member.documentKey().value() + " yet: "
          + published.getClass().getSimpleName(), null);
    }
  }

  private Duration lease() {
    // Reading the documents (up to a job's bytes from Cloud Storage) comes before the paid call.
    return limits.timeout().plus(limits.timeout()).plus(DocumentFlow.PAID_LEASE_MARGIN);
  }

  private static String newId() {
    return UUID.randomUUID().toString().replace("-", ""); // 32 hex digits, within the Files API's 40-character names
  }
}
