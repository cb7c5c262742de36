package dev.once.local;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition with a deadline, so tests never sleep for a guessed time: they wait exactly as long as
 * the system needs, and fail with a message naming what never happened.
 *
 * <p>It polls every 10 ms at first, then less often, up to every 50 ms: many conditions read Firestore or count over
 * a stack's collections, and a wait of seconds (a lease, a kill's recovery) polled a hundred times a second is load
 * that the test classes running beside it pay for.
 */
public final class Await {
  private static final long FIRST_POLL_NANOS = Duration.ofMillis(10).toNanos();
  private static final long MAX_POLL_NANOS = Duration.ofMillis(50).toNanos();

  private Await() {}

  /** Returns once {@code condition} holds; throws {@link AssertionError} naming {@code what} at the deadline. */
  public static void until(Duration timeout, BooleanSupplier condition, String what) {
    value(timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty(), what);
  }

  /** Returns the first present value {@code probe} yields; throws {@link AssertionError} at the deadline. */
  public static <T> T value(Duration timeout, Supplier<Optional<T>> probe, String what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long poll = FIRST_POLL_NANOS;
    while (true) {
      Optional<T> value = probe.get();
      if (value.isPresent()) {
        return value.get();
      }
      if (System.nanoTime() - deadline >= 0) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      LockSupport.parkNanos(Math.min(poll, Math.max(1, deadline - System.nanoTime())));
      poll = Math.min(MAX_POLL_NANOS, poll * 2);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what);
      }
    }
  }
}
