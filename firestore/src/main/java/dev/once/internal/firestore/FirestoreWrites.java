package dev.once.internal.firestore;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.SetOptions;
import com.google.cloud.firestore.UpdateBuilder;
import dev.once.ledger.DocumentWrites;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link DocumentWrites} added to a Firestore write batch or transaction, and the one place where the collections the
 * ledger's callers name for documents beside its records are opened ({@link #ref}).
 */
final class FirestoreWrites implements DocumentWrites {
  private final Firestore db;
  private final UpdateBuilder<?> builder;

  FirestoreWrites(Firestore db, UpdateBuilder<?> builder) {
    this.db = db;
    this.builder = builder;
  }

  @Override
  public void set(String collection, String id, Map<String, Object> fields) {
    builder.set(ref(db, collection, id), resolve(fields));
  }

  @Override
  public void merge(String collection, String id, Map<String, Object> fields) {
    builder.set(ref(db, collection, id), resolve(fields), SetOptions.merge());
  }

  @Override
  public void create(String collection, String id, Map<String, Object> fields) {
    builder.create(ref(db, collection, id), resolve(fields));
  }

  /** A document beside the records, as a caller names it (its writes through {@link DocumentWrites}, its reads). */
  static DocumentReference ref(Firestore db, String collection, String id) {
    return db.collection(collection).document(id);
  }

  /** The fields with the store's own values (server time, increments) as Firestore's sentinels, times as its own. */
  static Map<String, Object> resolve(Map<String, Object> fields) {
    Map<String, Object> resolved = new LinkedHashMap<>();
    fields.forEach((name, value) -> resolved.put(name, resolveValue(value)));
    return resolved;
  }

  @SuppressWarnings("unchecked")
  private static Object resolveValue(Object value) {
    if (value == Special.SERVER_TIME) {
      return FieldValue.serverTimestamp();
    }
    if (value instanceof Instant instant) {
      return Times.timestamp(instant);
    }
    if (value instanceof Increment increment) {
      return FieldValue.increment(increment.amount());
    }
    if (value instanceof Map<?, ?> map) {
      return resolve((Map<String, Object>) map);
    }
    if (value instanceof List<?> list) {
      List<Object> resolved = new ArrayList<>(list.size());
      list.forEach(item -> resolved.add(resolveValue(item)));
      return resolved;
    }
    return value;
  }
}
