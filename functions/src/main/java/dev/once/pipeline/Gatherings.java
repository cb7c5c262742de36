package dev.once.pipeline;

import com.google.cloud.Timestamp;
import dev.once.key.Sha256;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.SideWrites;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;

/**
 * Gatherings ({@code gatherings/{id}}): the batch jobs being formed from queued documents, one record each from the
 * moment it is opened until its job is completed. A document joins a gathering by a write conditional on the update
 * time its queued analysis was read at (DESIGN decision 1: no read-then-write transaction), so of two submitters
 * racing for it one wins and the other's write fails its precondition. Documents are assigned only by the gathering's
 * opener, before its submission reads them as the job's requests ({@code JobSubmission}), which first seals the
 * gathering: it records the ids of its members, and they alone are the job's. An opener that stalled (a GC pause, a
 * throttled CPU) past a submission's lease may still assign a document after that: it is in no job, and the
 * reconciler puts it back in the queue ({@link #requeue}).
 *
 * <p>Every write may be resent by the client (DESIGN decision 16): a resent opening finds its own record (the id is
 * new), a resent assignment fails its precondition and then finds the document in this gathering, a submission's or
 * a completion's writes land the same values again. Firestore keeps them in {@link FirestoreGatherings}; the writes
 * that ride in a ledger commit ({@link #submitted}, {@link #done}…) are made here, for any store.
 */
public interface Gatherings {
  String COLLECTION = "gatherings";
  /** Values of a gathering's {@code state}. */
  String OPEN = "open";
  String SUBMITTED = "submitted";
  String DONE = "done";
  /** When Gemini first said it had no job by the gathering's job's name ({@link #notFound}). */
  String NOT_FOUND_AT = "notFoundAt";

  /** What {@link #open} did. */
  enum Opening {
    /** Opened by this call, within the cap on jobs in flight. */
    OPENED,
    /** Opened by another submitter, lately (a gathering of this name is open): the job is theirs to form. */
    TAKEN,
    /**
     * A gathering of this name opened before has ended (closed, or its job made), or its opener stopped (open since
     * before {@code staleBefore}, which the reconciler resumes): open one of another name.
     */
    ENDED,
    /** Past the cap on jobs in flight: closed again at once. */
    FULL
  }

  /**
   * The name of the gathering a job starting at {@code oldest} is formed in: the queue's oldest document as read, at
   * the update time it was read at. Submitters that read the same queue (a burst's uploads, racing at its end) open the
   * same gathering, and all but its first opener leave the job to it before reading the queue; a document that moves
   * on (gathered, or back in the queue) names a new one. 32 hex digits, within the Files API's 40-character names.
   */
  static String nameFor(RecordQueries.Queued oldest) {
    return Sha256.hex(oldest.documentId() + "@" + oldest.updateTime()).substring(0, 32);
  }

  /**
   * Records a new gathering, in flight, unless that makes more than {@code maxInFlight}: after its record is
   * created, the gatherings in flight opened no later than it are counted, and past the cap it closes itself (FULL).
   * Of racing openers, each counts those before it, so the first {@code maxInFlight} stay (two opened at the very
   * same time both count each other: both may back off, never both stay past the cap). The record carries a nonce of
   * this call's: an existing record bearing it is this call's create, resent by the client after its answer was lost;
   * one without it is another opener's ({@link Opening#TAKEN} while it is open and was opened at or after
   * {@code staleBefore}, else {@link Opening#ENDED}).
   */
  Opening open(String id, int maxInFlight, Instant staleBefore);

  /** How many gatherings are open or have a job running: what the cap on jobs in flight counts. */
  long inFlight();

  /**
   * Assigns these queued documents (oldest first, as the queue was read) to the gathering; returns how many of them it
   * holds (those assigned before, by a resent write, included). Each joins by an update conditional on the update time
   * it was read at, so nothing is read again: a document another submitter took, or that changed since it was read,
   * fails its precondition and is left to it (read once, to tell that from this very write resent). The oldest goes
   * first, alone: a submitter that loses it gives up the rest too, so submitters that read the same queue make one
   * full job, not several partial ones.
   */
  int assign(String id, List<RecordQueries.Queued> documents);

  /**
   * Closes a gathering that got no document (another submitter took them) or that its opener found past the cap: no
   * job, and no longer in flight. Only while it is still open and unsealed, by an update conditional on the update
   * time it was read at: an opener that stalled past a submission's lease may call this after the reconciler resumed
   * the gathering, sealed it and made its job, and must not take that running job out of flight (the cap on jobs in
   * flight would be passed by one). Returns whether it closed it.
   */
  boolean close(String id);

  /** A gathering whose job was not made yet: its submission was interrupted, or waits for Gemini's capacity. */
  record Unsubmitted(String id, Instant openedAt) {}

  /** Up to {@code limit} gatherings still open, their job not made yet. */
  List<Unsubmitted> unsubmitted(int limit);

  /**
   * The gathering's state, job and members (the ids its submission sealed, in order), as a completion must know them;
   * the members its submission refused before making the job (id → why: they are not in it), and the input file the
   * job was made from (null: inlined requests); null fields when it has none (no such gathering: all null).
   * {@code referenced}: sealed by a version whose requests give their document's reference (a gathering of an earlier
   * version is matched by the rules it was made under). {@code notFoundAt}: when Gemini first said it had no such job.
   */
  record State(String state, String job, List<String> members, Map<String, String> refused, String inputFile,
      boolean referenced, Instant notFoundAt) {
    public State(String state, String job, List<String> members) {
      this(state, job, members, Map.of(), null, false, null);
    }

    public boolean sealed() {
      return members != null;
    }
  }

  State state(String id);

  /**
   * Seals the gathering's membership before its job is made: records these document ids as its members unless an
   * earlier try of the submission recorded some, and returns the members recorded. Conditional on the update time
   * the unsealed gathering was read at, so of two tries (or a resent write) one seal lands, and both go by it.
   */
  State seal(String id, List<String> documentIds);

  /**
   * Before batches.create: the members this try refused (gone, too large, empty; id → why), which the job is made
   * without. A later try that adopts the job an earlier one made goes by them: it records them refused again (their
   * refusal was published then) and does not tell them a job that holds no request of theirs.
   */
  void refuse(String id, Map<String, String> refused);

  /**
   * Before batches.create: the input file the job is made from, under the name the Files API gave it, so that the
   * completion deletes that file, and no completion of an inlined job asks to delete one.
   */
  void recordInput(String id, String fileName);

  /**
   * After the commit that recorded the job: each member's analysis says it waits for that job (status, job), for the
   * reconciler's look at waiting documents and for {@code once stuck}. Not in that commit, which stays small whatever
   * the job's size: the gathering is what the completion goes by. Each write is conditional on the update time the
   * member was read at, so it never lands over a completion that came first; one that fails is made good by the
   * reconciler ({@link #requeue}'s pass). Returns how many landed.
   */
  int markSubmitted(String job, List<RecordQueries.Submitted> members);

  /** One member's write of {@link #markSubmitted(String, List)}, conditional on the update time it was read at. */
  Future<?> markSubmitted(String documentId, String job, Timestamp readAt);

  /**
   * Puts a document gathered into a gathering it is not a member of (no longer open: its submission sealed it, or it
   * was closed) back in the queue, keeping its place ({@code queuedAt}), size and reservation; conditional on the
   * update time it was read at. False when it changed meanwhile.
   */
  boolean requeue(String documentId, Timestamp readAt);

  /** In the commit that records its job: the job's name, still in flight. */
  static SideWrites submitted(String id, String job, int documents) {
    return writes -> writes.merge(COLLECTION, id, Map.of("state", SUBMITTED, "job", job, "documents", documents,
        "submittedAt", DocumentWrites.serverTime()));
  }

  /** What the job's answers given to no document cost (Google bills them all the same), for the operator. */
  static SideWrites unattributed(String id, long answers, long costMicroUsd, long promptTokens, long outputTokens) {
    Map<String, Object> usage = Map.of("answers", answers, "costMicroUsd", costMicroUsd, "promptTokens", promptTokens,
        "outputTokens", outputTokens);
    return writes -> writes.merge(COLLECTION, id, Map.of("unattributed", usage));
  }

  /**
   * Gemini answered that it has no batch job by the gathering's job's name, for the first time: recorded (the
   * commit's time, only when not recorded yet) so a job that has really vanished is given up on after a while, and
   * one 404 (a listing behind, an outage) re-runs nobody.
   */
  static SideWrites notFound(String id) {
    return writes -> writes.merge(COLLECTION, id, Map.of(NOT_FOUND_AT, DocumentWrites.serverTime()));
  }

  /** In the commit that completes its job (or gives its documents up): no longer in flight. */
  static SideWrites done(String id) {
    return writes -> writes.merge(COLLECTION, id, Map.of("state", DONE, "inFlight", false));
  }
}
