package dev.once.pipeline;

import com.google.cloud.Timestamp;
import dev.once.budget.Reservation;
import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What the pipeline reads back of its own documents ({@link RecordWrites}): every query it runs, bounded. Firestore answers
 * them in {@link FirestoreRecordQueries}; the flows' unit tests give a mock.
 */
public interface RecordQueries {
  /**
   * At most this many documents per job ({@code BATCH_MAX_DOCUMENTS} is bounded by it); the bound keeps a foreign or
   * corrupted job from reading the collection. No commit holds a job's documents (the gathering records their ids,
   * 5,000 × 64 characters: a third of a document's 1 MiB; the completion commits them in chunks), so it bounds reads.
   */
  int MAX_DOCUMENTS_PER_JOB = 5_000;

  /**
   * What a document's analysis says, as far as a completion, a deferral or a copy of its bytes must know: whose job it
   * waits for, if any; since when it waits for budget, if it does; whether a model answered it ({@code billed}: the
   * analysis names a {@code model}), which tells a billed {@code failed} answer from a give-up. {@code status} is
   * null when the analysis stores none this version knows.
   */
  record AnalysisState(IdempotencyKey documentKey, DocumentStatus status, String job, Instant deferredAt,
      boolean billed) {
    public AnalysisState(IdempotencyKey documentKey, DocumentStatus status, String job, Instant deferredAt) {
      this(documentKey, status, job, deferredAt, false);
    }

    /**
     * Whether a job made for this document is a stray second job: the analysis names another job, or the document is
     * done without it. Not while the document is deferred: a deferred document's next try adopts the job an earlier
     * try made and lost the answer of (the reconciler resumes it), and until then its analysis names no job.
     */
    public boolean disowns(String job) {
      return !job.equals(this.job) && status != DocumentStatus.DEFERRED;
    }
  }

  /** The analysis of the document with this id (one read), or empty when it has none. */
  Optional<AnalysisState> analysis(String documentId);

  /**
   * A document a batch job was submitted for, with the source recorded at submission and the day's budget it reserved
   * ({@link Reservation#NONE} when none), which the job's completion settles; how many jobs before this one ended
   * without an answer that could be given to it ({@code reruns}: it was queued again each time), and when it was first
   * queued (null for a document submitted before gathering existed).
   */
  record Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation,
      String gathering, Timestamp updateTime, int reruns, Instant queuedAt, List<String> tries, int run) {
    public Submitted {
      tries = tries == null ? List.of() : List.copyOf(tries);
      run = Math.max(1, run);
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering,
        Timestamp updateTime, int reruns, Instant queuedAt, List<String> tries) {
      this(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, 1);
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering) {
      this(documentKey, source, reservation, gathering, null, 0, null, List.of());
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering,
        Timestamp updateTime) {
      this(documentKey, source, reservation, gathering, updateTime, 0, null, List.of());
    }

    /** The same, {@code reruns} jobs having given it no usable answer, and these billed tries recorded. */
    public Submitted withReruns(int reruns, List<String> tries) {
      return new Submitted(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, run);
    }

    /** The same document, as run {@code run} of its analysis (an operator invalidated the earlier ones). */
    public Submitted asRun(int run) {
      return new Submitted(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, run);
    }

    /** Run again after an earlier job: its job is made from an input file, whose answers come back keyed. */
    public boolean rerun() {
      return reruns > 0;
    }
  }

  /**
   * The documents submitted to {@code job} (their analyses name it), at most {@link #MAX_DOCUMENTS_PER_JOB}: how a job
   * that ended without answers is traced back to its documents.
   */
  List<Submitted> submittedTo(String job);

  /**
   * Whether any document of this pipeline was submitted to {@code job}: one read of at most one document, on the index
   * {@link #submittedTo} uses, within {@code bound} (the webhook, which someone waits on, bounds it tighter).
   */
  boolean anySubmittedTo(String job, Duration bound);

  /**
   * The documents gathered into {@code gathering} (their analyses' {@code batch}): the requests of its job, with their
   * sources, and the update time each was read at.
   */
  List<Submitted> gatheredIn(String gathering);

  /**
   * Of these documents (by id, a bounded number of reads per call), those still waiting for {@code job}: gathered
   * into {@code gathering} (null: none) or submitted to the job, in the order given. One done or refused is left out.
   */
  List<Submitted> waitingFor(String job, String gathering, List<String> documentIds);

  /** A document gathered into a gathering, as read: which one, and the update time to write it conditionally on. */
  record Gathered(String documentId, String gathering, Timestamp updateTime) {}

  /**
   * Up to {@code limit} documents still {@code gathered}, from a random point of the collection, wrapping around
   * (as {@link #pendingSubmissions}): what the reconciler checks against their gatherings.
   */
  List<Gathered> gathered(int limit, String startAtId);

  /**
   * A document waiting to be gathered into a batch job: its size, since when it waits, the most documents a job
   * holding it may have ({@code jobLimit}, 0: no bound of its own; set when Gemini refused a job of it for its size),
   * how many jobs before gave it no answer that could be given to it ({@code reruns}), and the update time it was read
   * at (null when not read from the queue), which its assignment to a gathering is conditional on.
   */
  record Queued(String documentId, long size, Instant queuedAt, int jobLimit, int reruns, Timestamp updateTime) {
    public Queued(String documentId, long size, Instant queuedAt) {
      this(documentId, size, queuedAt, 0, 0);
    }

    public Queued(String documentId, long size, Instant queuedAt, int jobLimit, int reruns) {
      this(documentId, size, queuedAt, jobLimit, reruns, null);
    }

    /** Back in the queue after a job: it waited a whole job already, so a job of it is due at once. */
    public boolean back() {
      return reruns > 0 || jobLimit > 0;
    }
  }

  /** Up to {@code limit} queued documents, oldest first. */
  List<Queued> queued(int limit);

  /**
   * How many documents are queued, counted up to {@code limit}, so an upload can tell a full job's worth is waiting
   * without reading it.
   */
  long queuedCount(int limit);

  /** A document whose batch job has not been completed yet, as its analysis says. */
  record Pending(IdempotencyKey documentKey, String job) {}

  /**
   * Up to {@code limit} documents still {@code submitted}, starting at a random point of the collection and wrapping
   * around, so that over a few runs every one of them is looked at, however many are waiting. A document whose key or
   * job cannot be read is skipped: it must not stop the others being looked at.
   */
  List<Pending> pendingSubmissions(int limit, String startAtId);

  /** A document waiting for the day's budget, as its analysis recorded it. */
  record Deferred(IdempotencyKey documentKey, DocumentSource source, Instant deferredAt) {}

  /**
   * Up to {@code limit} deferred documents, oldest deferral first. A document whose key or source cannot be read is
   * skipped: it must not stop the others being resumed.
   */
  List<Deferred> deferred(int limit);
}
