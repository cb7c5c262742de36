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
 * <p>A probe that throws (a Firestore read past its own bound on a loaded machine, an emulator restarting) is a
 * condition not met yet, not the end of the wait: the wait polls again until its deadline, and a timeout carries the
 * last such failure as its cause. An {@link Error} a probe throws (an assertion it makes on purpose) ends the wait at
 * once.
 *
 * <p>It polls every 10 ms at first, then less often: up to every 50 ms while the wait is young, then at most a
 * twentieth of the time already waited, up to every 500 ms. Many conditions read Firestore or count over a stack's
 * collections, and a wait of a minute (a lease, a kill's recovery) polled twenty times a second is load that the test
 * classes running beside it pay for; a twentieth keeps what a wait adds to the time it took within 5 %.
 */
public final class Await {
  private static final long FIRST_POLL_NANOS = Duration.ofMillis(10).toNanos();
  private static final long SHORT_POLL_NANOS = Duration.ofMillis(50).toNanos();
  private static final long MAX_POLL_NANOS = Duration.ofMillis(500).toNanos();

  private Await() {}

  /** Returns once {@code condition} holds; throws {@link AssertionError} naming {@code what} at the deadline. */
  public static void until(Duration timeout, BooleanSupplier condition, String what) {
    value(timeout, () -> condition.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty(), what);
  }

  /** Returns the first present value {@code probe} yields; throws {@link AssertionError} at the deadline. */
  public static <T> T value(Duration timeout, Supplier<Optional<T>> probe, String what) {
    long started = System.nanoTime();
    long deadline = started + timeout.toNanos();
    long poll = FIRST_POLL_NANOS;
    RuntimeException lastFailure = null;
    while (true) {
      try {
        Optional<T> value = probe.get();
        if (value.isPresent()) {
          return value.get();
        }
      } catch (RuntimeException e) {
        lastFailure = e; // not met yet: a read that failed now may answer at the next poll
      }
      long now = System.nanoTime();
      if (now - deadline >= 0) {
        AssertionError timedOut = new AssertionError("timed out after " + timeout + " waiting for " + what
            + (lastFailure == null ? "" : " (the condition's last check failed: " + lastFailure + ")"));
        if (lastFailure != null) {
          timedOut.initCause(lastFailure);
        }
        throw timedOut;
      }
      LockSupport.parkNanos(Math.min(poll, Math.max(1, deadline - now)));
      poll = nextPoll(poll, System.nanoTime() - started);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what);
      }
    }
  }

  /** Doubling up to 50 ms; after that a twentieth of the time waited so far, up to 500 ms. */
  static long nextPoll(long poll, long waitedNanos) {
    long doubled = Math.min(SHORT_POLL_NANOS, poll * 2);
    return Math.max(doubled, Math.min(MAX_POLL_NANOS, waitedNanos / 20));
  }
}
