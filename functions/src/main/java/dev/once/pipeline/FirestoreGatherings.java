package dev.once.pipeline;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.SetOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link Gatherings} in Firestore: a record a gathering, its documents' analyses moved in and out of the queue, every
 * conditional write by {@link Precondition#updatedAt} on the update time read, each call bounded by a deadline.
 */
public final class FirestoreGatherings implements Gatherings {
  /** How a gathering's requests are made: {@link #REFERENCED}, each giving its document's reference. */
  private static final String REQUESTS = "requests";
  private static final String REFERENCED = "referenced";
  /** The functions' deadline on each call: well inside their own timeouts. */
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;
  private final Duration timeout;

  public FirestoreGatherings(Firestore db) {
    this(db, TIMEOUT);
  }

  /** @param timeout the most each call waits for Firestore (an operator's tool waits longer than a function) */
  public FirestoreGatherings(Firestore db, Duration timeout) {
    this.db = db;
    this.timeout = timeout;
  }

  @Override
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

  @Override
  public long inFlight() {
    return await(db.collection(COLLECTION).whereEqualTo("inFlight", true).count().get(), "count the jobs in flight")
        .getCount();
  }

  @Override
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
    return db.collection(RecordWrites.ANALYSES).document(document.documentId()).update(Map.of(
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
      return id.equals(await(db.collection(RecordWrites.ANALYSES).document(document.documentId()).get(),
          "read a gathered document").getString("batch"));
    }
  }

  @Override
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

  /** An equality: automatic indexes. */
  @Override
  public List<Unsubmitted> unsubmitted(int limit) {
    List<Unsubmitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : await(db.collection(COLLECTION).whereEqualTo("state", OPEN)
        .limit(limit).get(), "read the unsubmitted gatherings")) {
      Timestamp opened = doc.getTimestamp("openedAt");
      found.add(new Unsubmitted(doc.getId(), opened == null ? Instant.EPOCH : opened.toDate().toInstant()));
    }
    return found;
  }

  @Override
  public State state(String id) {
    return state(await(db.collection(COLLECTION).document(id).get(), "read the gathering " + id));
  }

  private static State state(DocumentSnapshot doc) {
    Object members = doc.get("members");
    Object refused = doc.get("refused");
    Timestamp notFound = doc.getTimestamp(NOT_FOUND_AT);
    Map<String, String> reasons = new LinkedHashMap<>();
    if (refused instanceof Map<?, ?> byId) {
      byId.forEach((id, reason) -> reasons.put(String.valueOf(id), String.valueOf(reason)));
    }
    return new State(doc.getString("state"), doc.getString("job"),
        members instanceof List<?> ids ? ids.stream().map(String::valueOf).toList() : null, Map.copyOf(reasons),
        doc.getString("inputFile"), REFERENCED.equals(doc.getString(REQUESTS)),
        notFound == null ? null : Instant.ofEpochSecond(notFound.getSeconds(), notFound.getNanos()));
  }

  @Override
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

  @Override
  public void refuse(String id, Map<String, String> refused) {
    await(db.collection(COLLECTION).document(id).set(Map.of("refused", refused), SetOptions.merge()),
        "record the refusals of the gathering " + id);
  }

  @Override
  public void recordInput(String id, String fileName) {
    await(db.collection(COLLECTION).document(id).set(Map.of("inputFile", fileName), SetOptions.merge()),
        "record the input file of the gathering " + id);
  }

  @Override
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

  @Override
  public Future<?> markSubmitted(String documentId, String job, Timestamp readAt) {
    return db.collection(RecordWrites.ANALYSES).document(documentId).update(Map.of(
        "status", DocumentStatus.SUBMITTED.value(), "job", job, "updatedAt", FieldValue.serverTimestamp()),
        Precondition.updatedAt(readAt));
  }

  @Override
  public boolean requeue(String documentId, Timestamp readAt) {
    try {
      await(
          db.collection(RecordWrites.ANALYSES).document(documentId)
              .update(Map.of("status", DocumentStatus.QUEUED.value(),
                  "batch", FieldValue.delete(), "updatedAt", FieldValue.serverTimestamp()),
                  Precondition.updatedAt(readAt)),
          "put a document back in the queue");
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  private <T> T await(Future<T> future, String what) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not " + what + ": " + e, e);
    }
  }
}
