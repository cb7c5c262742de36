package dev.once.cli.stats;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import dev.once.cli.Context;
import dev.once.cli.Fields;
import dev.once.cli.Reads;
import dev.once.gemini.ModelUnavailable;
import dev.once.guard.Outcome;
import dev.once.ledger.RecordFields;
import dev.once.ledger.RecordState;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Outcomes per effect from the ledger: every record written since the cut-off (Firestore's time less {@code since}),
 * counted by state — done is processed, rejected is rejected (failed when given up at its cap of tries), a claim
 * whose holder gave it up with an error is failed, a claim still held is in flight — and the documents the spending guard deferred since then (analyse),
 * counted by their analyses: the claim a deferral released is not counted again (nor as failed).
 * Absorbed duplicates write nothing, so the ledger cannot count them (the logs' metric does). The ledger is read
 * in document-id order, which needs no index, up to {@code maxRecords}: this is the local way; a deployed ledger
 * is counted by the metric instead.
 */
final class LedgerCounts {
  private static final int PAGE = 500;

  record Result(Counts counts, long scanned, boolean truncated, Instant cutoff) {}

  static Result count(Context.Target target, Duration since, long maxRecords) {
    Firestore db = target.db();
    Counts counts = new Counts(false);
    Query all = db.collection(target.collection()).orderBy(FieldPath.documentId());
    Instant cutoff = null;
    String after = null;
    long scanned = 0;
    while (scanned < maxRecords) {
      int size = (int) Math.min(PAGE, maxRecords - scanned);
      Query page = after == null ? all : all.startAfter(after);
      QuerySnapshot snapshot = Reads.await(page.limit(size).get(), "the ledger");
      if (cutoff == null) {
        cutoff = instant(snapshot.getReadTime()).minus(since);
      }
      for (QueryDocumentSnapshot doc : snapshot.getDocuments()) {
        Timestamp updated = doc.getTimestamp(Fields.UPDATED_AT);
        String outcome = updated == null || instant(updated).isBefore(cutoff) ? null
            : outcome(doc, snapshot.getReadTime());
        if (outcome != null) {
          counts.add(doc.getString(Fields.EFFECT), outcome, 1);
          if (OutcomeLabel.FAILED.label().equals(outcome) && ModelUnavailable.says(doc.getString(Fields.ERROR))) {
            counts.waitingForTheModel(1);
          }
        }
      }
      scanned += snapshot.size();
      if (snapshot.size() < size) {
        return new Result(withDeferred(db, counts, cutoff), scanned, false, cutoff);
      }
      after = snapshot.getDocuments().get(snapshot.size() - 1).getId();
    }
    return new Result(withDeferred(db, counts, cutoff), scanned, true, cutoff);
  }

  /** The record's outcome label; null for a claim a deferral released, which its analysis counts. */
  private static String outcome(QueryDocumentSnapshot doc, Timestamp readTime) {
    String state = doc.getString(Fields.STATE);
    if (RecordState.DONE.name().equals(state)) {
      return OutcomeLabel.PROCESSED.label();
    }
    String error = doc.getString(Fields.ERROR);
    if (RecordState.REJECTED.name().equals(state)) {
      boolean gaveUp = RecordFields.gaveUp(doc.get(RecordFields.GAVE_UP), error);
      return Outcome.rejected(error, gaveUp).label().label(); // failed when given up, as its log says
    }
    Timestamp lease = doc.getTimestamp(Fields.LEASE_EXPIRES_AT);
    if (lease != null && lease.compareTo(readTime) > 0) {
      return OutcomeLabel.IN_FLIGHT.label();
    }
    if (Fields.deferral(error)) {
      return null; // counted once, by its deferred analysis (withDeferred)
    }
    if (error == null && doc.get(RecordFields.HISTORY) instanceof List<?> history && !history.isEmpty()
        && !(doc.get(RecordFields.CALLS) instanceof List<?> calls && !calls.isEmpty())) {
      return "invalidated"; // an operator's re-run to come: neither failed nor a duplicate
    }
    return error != null ? OutcomeLabel.FAILED.label() : "abandoned";
  }

  private static Counts withDeferred(Firestore db, Counts counts, Instant cutoff) {
    long deferred = Reads.await(db.collection(RecordWrites.ANALYSES)
        .whereEqualTo(Fields.STATUS, DocumentStatus.DEFERRED.value())
        .whereGreaterThanOrEqualTo(Fields.DEFERRED_AT, timestamp(cutoff)).count().get(), "the deferred documents")
        .getCount();
    counts.add(Effects.ANALYSE, OutcomeLabel.DEFERRED.label(), deferred);
    return counts;
  }

  private static Instant instant(Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }

  private static Timestamp timestamp(Instant i) {
    return Timestamp.ofTimeSecondsAndNanos(i.getEpochSecond(), i.getNano());
  }
}
