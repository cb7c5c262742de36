package dev.once.cli.inspect;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.cli.Context;
import dev.once.cli.Reads;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What Firestore holds about one key, read only: its ledger records, its analysis, its billing entries and a batch
 * job's documents. {@code once inspect} prints them; {@code once redrive} reads them before it sends an event again.
 */
public final class KeyRecords {
  private final Firestore db;
  private final FirestoreLedger ledger;

  public KeyRecords(Context.Target target) {
    this.db = target.db();
    this.ledger = target.ledger();
  }

  /** The key's ledger records by effect, in {@link Effects#ALL} order; an expired (deleted) record is absent. */
  public Map<String, LedgerRecord> ledger(IdempotencyKey key) {
    Map<String, LedgerRecord> records = new LinkedHashMap<>();
    for (String effect : Effects.ALL) {
      ledger.lookup(key, effect).ifPresent(r -> records.put(effect, r));
    }
    return records;
  }

  /**
   * The document keys whose {@link IdempotencyKey#logHash} (what log lines show instead of a key) is {@code hash}:
   * the analyses whose id, the key's SHA-256, begins with it. Hex digits sort below "g", so one id range holds them.
   */
  public List<IdempotencyKey> byLogHash(String hash) {
    List<IdempotencyKey> keys = new ArrayList<>();
    for (QueryDocumentSnapshot analysis : Reads.await(db.collection(RecordWrites.ANALYSES)
        .whereGreaterThanOrEqualTo(FieldPath.documentId(), hash).whereLessThan(FieldPath.documentId(), hash + "g")
        .limit(10).get(), "the analyses of key hash " + hash).getDocuments()) {
      String key = analysis.getString("key");
      if (key != null) {
        keys.add(IdempotencyKey.of(key));
      }
    }
    return keys;
  }

  /** {@code analyses/{id}} of a document key. */
  public Optional<DocumentSnapshot> analysis(IdempotencyKey key) {
    DocumentSnapshot snapshot = Reads.await(db.collection(RecordWrites.ANALYSES).document(key.documentId()).get(),
        RecordWrites.ANALYSES + "/" + key.documentId());
    return snapshot.exists() ? Optional.of(snapshot) : Optional.empty();
  }

  /** By the {@code key} field, not the id: a second entry under another id would show up too. */
  public List<QueryDocumentSnapshot> billing(IdempotencyKey key) {
    return new ArrayList<>(Reads.await(db.collection(RecordWrites.BILLING).whereEqualTo("key", key.value()).get(),
        RecordWrites.BILLING + " of " + key).getDocuments());
  }

  /** The analyses of a batch job's documents (up to 100). */
  public List<QueryDocumentSnapshot> jobDocuments(String job) {
    return new ArrayList<>(Reads.await(db.collection(RecordWrites.ANALYSES).whereEqualTo("job", job).limit(100).get(),
        "the analyses of " + job).getDocuments());
  }
}
