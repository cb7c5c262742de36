package dev.once.pipeline;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import java.time.Instant;

/**
 * {@link BatchGauges} from Firestore, in four small reads: two counts (a read per thousand), the oldest queued
 * document, and the gatherings in flight — at most {@code BATCH_MAX_JOBS_IN_FLIGHT}, read without their members — by
 * state. Read at Firestore's time (the last read's), so ages are judged by its clock.
 */
public final class FirestoreBatchGauges implements BatchGauges {
  /** More than the cap allows (100), so racing openers that back off are counted too. */
  private static final int IN_FLIGHT_READ = 500;

  private final Firestore db;

  public FirestoreBatchGauges(Firestore db) {
    this.db = db;
  }

  @Override
  public Reading read() {
    long queued = count(DocumentStatus.QUEUED);
    long gathered = count(DocumentStatus.GATHERED);
    QuerySnapshot oldest = FirestoreRecordQueries.await(db.collection(RecordWrites.ANALYSES)
        .whereEqualTo("status", DocumentStatus.QUEUED.value()).orderBy("queuedAt").limit(1).get(),
        "the oldest queued document");
    Instant oldestQueuedAt = oldest.isEmpty() ? null : instant(oldest.getDocuments().get(0).getTimestamp("queuedAt"));
    QuerySnapshot inFlight = FirestoreRecordQueries.await(db.collection(Gatherings.COLLECTION)
        .whereEqualTo("inFlight", true).select("state", "sealedAt", "submittedAt").limit(IN_FLIGHT_READ).get(),
        "the gatherings in flight");
    long gathering = 0;
    long sealed = 0;
    long submitted = 0;
    Instant oldestSubmittedAt = null;
    for (QueryDocumentSnapshot g : inFlight) {
      if (Gatherings.SUBMITTED.equals(g.getString("state"))) {
        submitted++;
        Instant at = instant(g.getTimestamp("submittedAt"));
        oldestSubmittedAt = at != null && (oldestSubmittedAt == null || at.isBefore(oldestSubmittedAt)) ? at
            : oldestSubmittedAt;
      } else if (g.get("sealedAt") != null) {
        sealed++;
      } else {
        gathering++;
      }
    }
    return new Reading(instant(inFlight.getReadTime()), queued, gathered, oldestQueuedAt, gathering, sealed,
        submitted, oldestSubmittedAt);
  }

  private long count(DocumentStatus status) {
    return FirestoreRecordQueries
        .await(db.collection(RecordWrites.ANALYSES).whereEqualTo("status", status.value()).count()
            .get(), "the " + status.value() + " documents")
        .getCount();
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }
}
