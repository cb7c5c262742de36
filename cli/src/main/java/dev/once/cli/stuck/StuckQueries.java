package dev.once.cli.stuck;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import dev.once.cli.Context;
import dev.once.cli.Fields;
import dev.once.cli.Reads;
import dev.once.cli.stuck.PageToken.Cursor;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.FirestoreGatherings;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordWrites;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The queries behind {@code once stuck}, each paged by a cursor and bounded by a limit.
 *
 * <p>The ledger is listed by {@code state == "CLAIMED"} in document-id order, which the single-field index on
 * {@code state} serves: its entries are keyed by (state, hashed id), so they spread over the index instead of piling
 * up at one end, and the ledger's writes, on every delivery's path, pay one index entry more and no composite. A
 * composite on {@code (state, leaseExpiresAt)} would let Firestore filter the expired ones, but its entries grow at
 * one end with time (Firestore's hotspot on sequential index values) and every claim would pay for it. Claims held
 * at any moment are the deliveries in flight plus the ones in trouble, so reading them all is cheap. Each one found
 * is read again through the ledger ({@link LedgerRecord}), whose read time judges the lease by Firestore's clock.
 *
 * <p>Analyses are queried by time ({@code status == "submitted"} older than a cut-off, {@code status == "queued"} by
 * {@code queuedAt}, {@code status == "deferred"} by {@code deferredAt}): documents waiting on batch jobs can be many,
 * so Firestore filters them, with the composite indexes terraform/firestore.tf declares. Gatherings are read by state
 * and judged here: those in flight are at most BATCH_MAX_JOBS_IN_FLIGHT.
 */
final class StuckQueries {
  private final Firestore db;
  private final Context.Target target;
  private final FirestoreLedger ledger;
  private final Gatherings gatherings;

  StuckQueries(Context.Target target) {
    this.db = target.db();
    this.target = target;
    this.ledger = target.ledger();
    this.gatherings = new FirestoreGatherings(db, Reads.TIMEOUT);
  }

  /** One page of claims still held: those whose lease ran out and those retried {@code attempts} times or more. */
  record Claims(List<LedgerRecord> expired, List<LedgerRecord> retried, Cursor next, Instant readTime) {}

  /** One page of analyses and where the next one starts ({@link Cursor#END} when this was the last). */
  record Documents(List<QueryDocumentSnapshot> documents, Cursor next) {}

  Claims claims(Cursor after, int limit, int attempts) {
    Query claimed = db.collection(target.collection()).whereEqualTo(Fields.STATE, RecordState.CLAIMED.name())
        .orderBy(FieldPath.documentId());
    Query page = after == null ? claimed : claimed.startAfter(after.id());
    QuerySnapshot snapshot = Reads.await(page.limit(limit).get(), "the claims held in the ledger");
    List<LedgerRecord> expired = new ArrayList<>();
    List<LedgerRecord> retried = new ArrayList<>();
    for (QueryDocumentSnapshot doc : snapshot.getDocuments()) {
      Optional<LedgerRecord> record = record(doc);
      if (record.isEmpty() || record.get().state() != RecordState.CLAIMED) {
        continue; // finished since the query read it
      }
      // A deferral's released claim waits for budget, not for a redelivery: listed with the deferred documents.
      if (!record.get().leaseLive() && !Fields.deferral(record.get().error())) {
        expired.add(record.get());
      }
      if (record.get().attempts() >= attempts) {
        retried.add(record.get());
      }
    }
    Instant readTime = Instant.ofEpochSecond(snapshot.getReadTime().getSeconds(), snapshot.getReadTime().getNanos());
    return new Claims(expired, retried, next(snapshot, limit, null), readTime);
  }

  Documents submittedBefore(Instant cutoff, Cursor after, int limit) {
    Query old = db.collection(RecordWrites.ANALYSES).whereEqualTo(Fields.STATUS, DocumentStatus.SUBMITTED.value())
        .whereLessThan(Fields.UPDATED_AT, timestamp(cutoff)).orderBy(Fields.UPDATED_AT).orderBy(FieldPath.documentId());
    Query page = after == null ? old : old.startAfter(timestamp(after.orderedAt()), after.id());
    QuerySnapshot snapshot = Reads.await(page.limit(limit).get(), "the documents still submitted");
    return new Documents(snapshot.getDocuments(), next(snapshot, limit, Fields.UPDATED_AT));
  }

  Documents queuedBefore(Instant cutoff, Cursor after, int limit) {
    Query old = db.collection(RecordWrites.ANALYSES).whereEqualTo(Fields.STATUS, DocumentStatus.QUEUED.value())
        .whereLessThan(Fields.QUEUED_AT, timestamp(cutoff)).orderBy(Fields.QUEUED_AT).orderBy(FieldPath.documentId());
    Query page = after == null ? old : old.startAfter(timestamp(after.orderedAt()), after.id());
    QuerySnapshot snapshot = Reads.await(page.limit(limit).get(), "the documents queued");
    return new Documents(snapshot.getDocuments(), next(snapshot, limit, Fields.QUEUED_AT));
  }

  /** A gathering as {@code once stuck} shows it: when it was opened, sealed and submitted, its job and size. */
  record Gathering(String id, Instant openedAt, Instant sealedAt, Instant submittedAt, String job, Long documents) {}

  /** One page of gatherings in {@code state}, and where the next one starts. */
  record GatheringPage(List<Gathering> gatherings, Cursor next) {}

  /**
   * Gatherings in one state, in document-id order (an equality: the automatic index on {@code state}), without their
   * members (5,000 ids at most each): those in flight are at most BATCH_MAX_JOBS_IN_FLIGHT, so the tool judges their
   * times itself rather than have a composite index on every gathering.
   */
  GatheringPage gatherings(String state, Cursor after, int limit) {
    Query inState =
        db.collection(Gatherings.COLLECTION).whereEqualTo(Fields.STATE, state).orderBy(FieldPath.documentId())
            .select(Fields.OPENED_AT, Fields.SEALED_AT, Fields.SUBMITTED_AT, Fields.JOB, Fields.DOCUMENTS);
    Query page = after == null ? inState : inState.startAfter(after.id());
    QuerySnapshot snapshot = Reads.await(page.limit(limit).get(), "the " + state + " gatherings");
    List<Gathering> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : snapshot.getDocuments()) {
      found.add(new Gathering(doc.getId(), instant(doc.getTimestamp(Fields.OPENED_AT)),
          instant(doc.getTimestamp(Fields.SEALED_AT)), instant(doc.getTimestamp(Fields.SUBMITTED_AT)),
          doc.getString(Fields.JOB), doc.getLong(Fields.DOCUMENTS)));
    }
    return new GatheringPage(found, next(snapshot, limit, null));
  }

  /** How many documents a gathering holds (assigned to it), counted: its members are not read. */
  long gatheredInto(String gathering) {
    return Reads.await(db.collection(RecordWrites.ANALYSES).whereEqualTo(Fields.BATCH, gathering).count().get(),
        "the documents of gathering " + gathering).getCount();
  }

  /** The batch jobs in flight, counted by the submitters' own query, so the tool and the cap cannot disagree. */
  long jobsInFlight() {
    return Reads.call(gatherings::inFlight, "the batch jobs in flight");
  }

  Documents deferred(Cursor after, int limit) {
    Query deferred = db.collection(RecordWrites.ANALYSES).whereEqualTo(Fields.STATUS, DocumentStatus.DEFERRED.value())
        .orderBy(Fields.DEFERRED_AT).orderBy(FieldPath.documentId());
    Query page = after == null ? deferred : deferred.startAfter(timestamp(after.orderedAt()), after.id());
    QuerySnapshot snapshot = Reads.await(page.limit(limit).get(), "the deferred documents");
    return new Documents(snapshot.getDocuments(), next(snapshot, limit, Fields.DEFERRED_AT));
  }

  private Optional<LedgerRecord> record(QueryDocumentSnapshot doc) {
    String key = doc.getString(Fields.KEY);
    String effect = doc.getString(Fields.EFFECT);
    if (key == null || effect == null) {
      return Optional.empty();
    }
    try {
      return ledger.lookup(IdempotencyKey.of(key), effect);
    } catch (IllegalArgumentException e) { // InvalidKey, or an effect name the ledger refuses
      return Optional.empty(); // not a record the ledger wrote
    }
  }

  /** A full page may have a successor; a short one is the last. */
  private static Cursor next(QuerySnapshot snapshot, int limit, String orderedBy) {
    List<QueryDocumentSnapshot> docs = snapshot.getDocuments();
    if (docs.size() < limit) {
      return Cursor.END;
    }
    QueryDocumentSnapshot last = docs.get(docs.size() - 1);
    Timestamp at = orderedBy == null ? null : last.getTimestamp(orderedBy);
    return new Cursor(at == null ? null : Instant.ofEpochSecond(at.getSeconds(), at.getNanos()), last.getId());
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }

  static Timestamp timestamp(Instant instant) {
    return Timestamp.ofTimeSecondsAndNanos(instant.getEpochSecond(), instant.getNano());
  }
}
