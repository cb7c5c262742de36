package dev.once.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * A clock the test moves: the store's ("server") clock of an {@link InMemoryLedger}, by which leases and retention are
 * judged, so a test lets a lease run out by {@link #advance advancing} it rather than by waiting.
 */
public final class ManualClock implements InstantSource {
  /** Where a clock starts unless told otherwise. */
  public static final Instant START = Instant.parse("2026-11-30T10:00:00Z");
  private volatile Instant now;

  public ManualClock() {
    this(START);
  }

  public ManualClock(Instant start) {
    this.now = start;
  }

  @Override
  public Instant instant() {
    return now;
  }

  /** Moves the clock on by {@code duration}. */
  public synchronized ManualClock advance(Duration duration) {
    if (duration.isNegative()) {
      throw new IllegalArgumentException("a store's clock does not go back, got " + duration);
    }
    now = now.plus(duration);
    return this;
  }

  /** Sets the clock to {@code instant}, which may be earlier (a clock the store never saw, say). */
  public void set(Instant instant) {
    now = instant;
  }
}
