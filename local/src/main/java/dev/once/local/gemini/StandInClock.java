package dev.once.local.gemini;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * Google's clock, as the stand-in keeps it: the system's, or set by a test to another day (a price that changes on a
 * date), from where it runs on at the system's pace. What a batch job's create, update and end times read.
 */
final class StandInClock implements InstantSource {
  private volatile Duration offset = Duration.ZERO;

  /** From now on the clock reads {@code now}, then runs on; null: the system's clock again. */
  void set(Instant now) {
    offset = now == null ? Duration.ZERO : Duration.between(Instant.now(), now);
  }

  @Override
  public Instant instant() {
    return Instant.now().plus(offset);
  }
}
