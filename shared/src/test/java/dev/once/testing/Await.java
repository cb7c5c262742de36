package dev.once.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, instead of sleeping and hoping. */
public final class Await {
  private Await() {}

  public static void until(Duration deadline, BooleanSupplier condition, String what) {
    Instant end = Instant.now().plus(deadline);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(end)) {
        throw new AssertionError("not within " + deadline + ": " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for: " + what, e);
      }
    }
  }
}
