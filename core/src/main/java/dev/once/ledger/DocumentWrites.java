package dev.once.ledger;

import java.util.Map;

/**
 * Documents written in the commit that finishes a claim (an analysis, a billing entry), named by collection and id,
 * so they land with the record or not at all. Field values may hold {@link #serverTime()} and
 * {@link #increment(long)}, which the ledger resolves as Firestore does: the commit's time, an atomic addition.
 * Implemented by each ledger over its own store; an effect only describes its writes.
 */
public interface DocumentWrites {
  /** Replaces the document. */
  void set(String collection, String id, Map<String, Object> fields);

  /** Writes these fields, nested maps field by field, keeping the others; creates the document if absent. */
  void merge(String collection, String id, Map<String, Object> fields);

  /** Creates the document; the whole commit fails when it exists already. */
  void create(String collection, String id, Map<String, Object> fields);

  /** A field value: the time the commit is applied, by the store's clock. */
  static Object serverTime() {
    return Special.SERVER_TIME;
  }

  /** A field value: the stored number plus {@code amount} (0 when absent), applied atomically. */
  static Object increment(long amount) {
    return new Increment(amount);
  }

  /** The values a store resolves itself. */
  enum Special { SERVER_TIME }

  /** An atomic addition to a numeric field. */
  record Increment(long amount) {}
}
