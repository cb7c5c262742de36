package dev.once.ledger;

import com.google.cloud.Timestamp;
import java.time.Instant;

/** Conversions between Firestore timestamps and Instants, null-safe. */
final class Times {
  private Times() {}

  static Instant instant(Timestamp timestamp) {
    return timestamp == null ? null : Instant.ofEpochSecond(timestamp.getSeconds(), timestamp.getNanos());
  }

  static Timestamp timestamp(Instant instant) {
    return instant == null ? null : Timestamp.ofTimeSecondsAndNanos(instant.getEpochSecond(), instant.getNano());
  }
}
