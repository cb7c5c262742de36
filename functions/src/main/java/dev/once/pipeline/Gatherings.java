package dev.once.pipeline;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.SetOptions;
import dev.once.key.Sha256;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * a completion's writes land the same values again.
 */
public final class Gatherings {
  public static final String COLLECTION = "gatherings";
  /** Values of a gathering's {@code state}. */
  public static final String OPEN = "open";
  public static final String SUBMITTED = "submitted";
  public static final String DONE = "done";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;

  public Gatherings(Firestore db) {
    this.db = db;
  }

  /** What {@link #open} did. */
  public enum Opening {
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
  public static String nameFor(RecordQueries.Queued oldest) {
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
  public Opening open(String id, int maxInFlight, Instant staleBefore) {
    DocumentReference ref = db.collection(COLLECTION).document(id);
    String opener = UUID.randomUUID().toString();
    DocumentSnapshot opened;
    try {
      await(ref.create(Map.of("state", OPEN, "inFlight", true, "openedAt", FieldValue.serverTimestamp(),
          "opener", opener)), "open the gathering " + id);
      opened = await(ref.get(), "read the gathering " + id);
    } catch (IllegalStateException e) {
      opened = await(ref.get(), "read the gathering " + id);
      if (!opened.exists()) {
        throw e;
      }
      if (!opener.equals(opened.getString("opener"))) {
        Timestamp at = opened.getTimestamp("openedAt");
        boolean lately = at != null && !at.toDate().toInstant().isBefore(staleBefore);
        return OPEN.equals(opened.getString("state")) && lately ? Opening.TAKEN : Opening.ENDED;
      }
    }
    long before = await(db.collection(COLLECTION).whereEqualTo("inFlight", true)
        .whereLessThanOrEqualTo("openedAt", opened.getTimestamp("openedAt")).count().get(),
        "count the jobs in flight").getCount();
    if (before <= maxInFlight) {
      return Opening.OPENED;
    }
    close(id);
    return Opening.FULL;
  }

  /** How many gatherings are open or have a job running: what the cap on jobs in flight counts. */
  public long inFlight() {
    return await(db.collection(COLLECTION).whereEqualTo("inFlight", true).count().get(), "count the jobs in flight")
        .getCount();
  }

  /**
   * Assigns these queued documents (oldest first, as the queue was read) to the gathering; returns how many of them it
   * holds (those assigned before, by a resent write, included). Each joins by an update conditional on the update time
   * it was read at, so nothing is read again: a document another submitter took, or that changed since it was read,
   * fails its precondition and is left to it (read once, to tell that from this very write resent). The oldest goes
   * first, alone: a submitter that loses it gives up the rest too, so submitters that read the same queue make one
   * full job, not several partial ones.
   */
  public int assign(String id, List<RecordQueries.Queued> documents) {
    if (documents.isEmpty() || !held(id, documents.get(0), join(id, documents.get(0)))) {
      return 0;
    }
    List<Future<?>> writes = new ArrayList<>();
    for (RecordQueries.Queued document : documents.subList(1, documents.size())) {
      writes.add(join(id, document));
    }
    int held = 1;
    for (int i = 0; i < writes.size(); i++) {
      if (held(id, documents.get(i + 1), writes.get(i))) {
        held++;
      }
    }
    return held;
  }

  /** The update that moves a queued document into the gathering, conditional on the update time it was read at. */
  private Future<?> join(String id, RecordQueries.Queued document) {
    return db.collection(Records.ANALYSES).document(document.documentId()).update(Map.of(
        "status", DocumentStatus.GATHERED.value(), "batch", id, "updatedAt", FieldValue.serverTimestamp()),
        Precondition.updatedAt(document.updateTime()));
  }

  /** Whether the document is in the gathering once its update is answered. */
  private boolean held(String id, RecordQueries.Queued document, Future<?> write) {
    try {
      await(write, "gather a document");
      return true;
    } catch (IllegalStateException e) {
      // Failed its precondition (taken, or this very write resent after it landed), or failed outright: the document
      // says which.
      return id.equals(await(db.collection(Records.ANALYSES).document(document.documentId()).get(),
          "read a gathered document").getString("batch"));
    }
  }

  /**
   * Closes a gathering that got no document (another submitter took them) or that its opener found past the cap: no
   * job, and no longer in flight. Only while it is still open and unsealed, by an update conditional on the update
   * time it was read at: an opener that stalled past a submission's lease may call this after the reconciler resumed
   * the gathering, sealed it and made its job, and must not take that running job out of flight (the cap on jobs in
   * flight would be passed by one). Returns whether it closed it.
   */
  public boolean close(String id) {
    DocumentReference ref = db.collection(COLLECTION).document(id);
    for (int tries = 0; tries < 3; tries++) {
      DocumentSnapshot read = await(ref.get(), "read the gathering " + id);
      State state = state(read);
      if (!read.exists() || !OPEN.equals(state.state()) || state.sealed()) {
        return false;
      }
      try {
        await(ref.update(Map.of("state", DONE, "inFlight", false), Precondition.updatedAt(read.getUpdateTime())),
            "close the gathering " + id);
        return true;
      } catch (IllegalStateException e) {
        // Changed since it was read (sealed, or this very write resent after it landed): read it again.
      }
    }
    return DONE.equals(state(id).state());
  }

  /** A gathering whose job was not made yet: its submission was interrupted, or waits for Gemini's capacity. */
  public record Unsubmitted(String id, Instant openedAt) {}

  /** Up to {@code limit} gatherings still open, their job not made yet (an equality: automatic indexes). */
  public List<Unsubmitted> unsubmitted(int limit) {
    List<Unsubmitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : await(db.collection(COLLECTION).whereEqualTo("state", OPEN)
        .limit(limit).get(), "read the unsubmitted gatherings")) {
      Timestamp opened = doc.getTimestamp("openedAt");
      found.add(new Unsubmitted(doc.getId(), opened == null ? Instant.EPOCH : opened.toDate().toInstant()));
    }
    return found;
  }

  /**
   * The gathering's state, job and members (the ids its submission sealed, in order), as a completion must know them;
   * the members its submission refused before making the job (id → why: they are not in it), and the input file the
   * job was made from (null: inlined requests); null fields when it has none (no such gathering: all null).
   * {@code referenced}: sealed by a version whose requests give their document's reference (a gathering of an earlier
   * version is matched by the rules it was made under). {@code notFoundAt}: when Gemini first said it had no such job.
   */
  public record State(String state, String job, List<String> members, Map<String, String> refused, String inputFile,
      boolean referenced, Instant notFoundAt) {
    public State(String state, String job, List<String> members) {
      this(state, job, members, Map.of(), null, false, null);
    }

    public boolean sealed() {
      return members != null;
    }
  }

  public State state(String id) {
    return state(await(db.collection(COLLECTION).document(id).get(), "read the gathering " + id));
  }

  @SuppressWarnings("unchecked")
  private static State state(DocumentSnapshot doc) {
    Object members = doc.get("members");
    Object refused = doc.get("refused");
    Timestamp notFound = doc.getTimestamp(NOT_FOUND_AT);
    return new State(doc.getString("state"), doc.getString("job"),
        members instanceof List<?> ids ? List.copyOf((List<String>) ids) : null,
        refused instanceof Map<?, ?> reasons ? Map.copyOf((Map<String, String>) reasons) : Map.of(),
        doc.getString("inputFile"), REFERENCED.equals(doc.getString(REQUESTS)),
        notFound == null ? null : Instant.ofEpochSecond(notFound.getSeconds(), notFound.getNanos()));
  }

  /**
   * Seals the gathering's membership before its job is made: records these document ids as its members unless an
   * earlier try of the submission recorded some, and returns the members recorded. Conditional on the update time
   * the unsealed gathering was read at, so of two tries (or a resent write) one seal lands, and both go by it.
   */
  public State seal(String id, List<String> documentIds) {
    DocumentReference ref = db.collection(COLLECTION).document(id);
    DocumentSnapshot read = await(ref.get(), "read the gathering " + id);
    State before = state(read);
    if (before.sealed()) {
      return before;
    }
    try {
      // The seal also says how its requests are made, so its job's answers are matched by the rules it was made under.
      await(ref.update(Map.of("members", documentIds, "sealedAt", FieldValue.serverTimestamp(), REQUESTS, REFERENCED),
          Precondition.updatedAt(read.getUpdateTime())), "seal the gathering " + id);
      return new State(before.state(), before.job(), List.copyOf(documentIds), before.refused(), before.inputFile(),
          true, before.notFoundAt());
    } catch (IllegalStateException e) {
      // Sealed meanwhile (another try, or this very write resent after it landed), or failed outright: the record says.
      State now = state(id);
      if (now.sealed()) {
        return now;
      }
      throw e;
    }
  }

  /**
   * Before batches.create: the members this try refused (gone, too large, empty; id → why), which the job is made
   * without. A later try that adopts the job an earlier one made goes by them: it records them refused again (their
   * refusal was published then) and does not tell them a job that holds no request of theirs.
   */
  public void refuse(String id, Map<String, String> refused) {
    await(db.collection(COLLECTION).document(id).set(Map.of("refused", refused), SetOptions.merge()),
        "record the refusals of the gathering " + id);
  }

  /**
   * Before batches.create: the input file the job is made from, under the name the Files API gave it, so that the
   * completion deletes that file, and no completion of an inlined job asks to delete one.
   */
  public void recordInput(String id, String fileName) {
    await(db.collection(COLLECTION).document(id).set(Map.of("inputFile", fileName), SetOptions.merge()),
        "record the input file of the gathering " + id);
  }

  /**
   * After the commit that recorded the job: each member's analysis says it waits for that job (status, job), for the
   * reconciler's look at waiting documents and for {@code once stuck}. Not in that commit, which stays small whatever
   * the job's size: the gathering is what the completion goes by. Each write is conditional on the update time the
   * member was read at, so it never lands over a completion that came first; one that fails is made good by the
   * reconciler ({@link #requeue}'s pass). Returns how many landed.
   */
  public int markSubmitted(String job, List<RecordQueries.Submitted> members) {
    List<Future<?>> writes = new ArrayList<>();
    for (RecordQueries.Submitted member : members) {
      if (member.updateTime() != null) {
        writes.add(markSubmitted(member.documentKey().documentId(), job, member.updateTime()));
      }
    }
    int landed = 0;
    for (Future<?> write : writes) {
      try {
        await(write, "record a document's job");
        landed++;
      } catch (IllegalStateException e) {
        // moved on (completed), or to be made good by the reconciler
      }
    }
    return landed;
  }

  public Future<?> markSubmitted(String documentId, String job, Timestamp readAt) {
    return db.collection(Records.ANALYSES).document(documentId).update(Map.of(
        "status", DocumentStatus.SUBMITTED.value(), "job", job, "updatedAt", FieldValue.serverTimestamp()),
        Precondition.updatedAt(readAt));
  }

  /**
   * Puts a document gathered into a gathering it is not a member of (no longer open: its submission sealed it, or it
   * was closed) back in the queue, keeping its place ({@code queuedAt}), size and reservation; conditional on the
   * update time it was read at. False when it changed meanwhile.
   */
  public boolean requeue(String documentId, Timestamp readAt) {
    try {
      await(db.collection(Records.ANALYSES).document(documentId).update(Map.of("status", DocumentStatus.QUEUED.value(),
          "batch", FieldValue.delete(), "updatedAt", FieldValue.serverTimestamp()), Precondition.updatedAt(readAt)),
          "put a document back in the queue");
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  /** In the commit that records its job: the job's name, still in flight. */
  public static SideWrites submitted(String id, String job, int documents) {
    return writes -> writes.merge(COLLECTION, id, Map.of("state", SUBMITTED, "job", job, "documents", documents,
        "submittedAt", DocumentWrites.serverTime()));
  }

  /** What the job's answers given to no document cost (Google bills them all the same), for the operator. */
  public static SideWrites unattributed(String id, long answers, long costMicroUsd, long promptTokens,
      long outputTokens) {
    Map<String, Object> usage = Map.of("answers", answers, "costMicroUsd", costMicroUsd, "promptTokens", promptTokens,
        "outputTokens", outputTokens);
    return writes -> writes.merge(COLLECTION, id, Map.of("unattributed", usage));
  }

  /** How a gathering's requests are made: {@link #REFERENCED}, each giving its document's reference. */
  static final String REQUESTS = "requests";
  static final String REFERENCED = "referenced";
  static final String NOT_FOUND_AT = "notFoundAt";

  /**
   * Gemini answered that it has no batch job by the gathering's job's name, for the first time: recorded (the
   * commit's time, only when not recorded yet) so a job that has really vanished is given up on after a while, and
   * one 404 (a listing behind, an outage) re-runs nobody.
   */
  public static SideWrites notFound(String id) {
    return writes -> writes.merge(COLLECTION, id, Map.of(NOT_FOUND_AT, DocumentWrites.serverTime()));
  }

  /** In the commit that completes its job (or gives its documents up): no longer in flight. */
  public static SideWrites done(String id) {
    return writes -> writes.merge(COLLECTION, id, Map.of("state", DONE, "inFlight", false));
  }

  private static <T> T await(Future<T> future, String what) {
    try {
      return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not " + what + ": " + e, e);
    }
  }
}
