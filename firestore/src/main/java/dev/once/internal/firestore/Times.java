package dev.once.internal.firestore;

import com.google.cloud.Timestamp;
import java.time.Instant;

/** Conversions between Firestore timestamps and Instants, null-safe. */
public final class Times {
  private Times() {}

  public static Instant instant(Timestamp timestamp) {
    return timestamp == null ? null : Instant.ofEpochSecond(timestamp.getSeconds(), timestamp.getNanos());
  }

  public static Timestamp timestamp(Instant instant) {
    return instant == null ? null : Timestamp.ofTimeSecondsAndNanos(instant.getEpochSecond(), instant.getNano());
  }
}
