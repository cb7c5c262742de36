package dev.once.ledger;

import java.util.Map;

/**
 * How an effect's result, a value of its own type, is kept on its ledger record, which holds fields: the one place
 * the field names of that result are spelled. Hand it to {@code Completion.of(codec, value)} when the effect
 * completes, and read the result back with {@code Outcome.recorded(codec)}: a duplicate's result is decoded
 * from the record the first delivery wrote, perhaps by an older version, so {@link #decode} reads every shape a
 * version ever wrote.
 *
 * <p>Field values are what the ledger stores: strings, booleans, whole numbers as {@code Long}, other numbers as
 * {@code Double}, times as {@code Instant}, lists and maps of those.
 */
public interface ResultCodec<T> {
  /** The fields recorded for {@code value}. */
  Map<String, Object> encode(T value);

  /** The value a record's fields stand for. */
  T decode(Map<String, Object> fields);
}
