package dev.once.cli;

import com.google.api.core.ApiFuture;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Waits for a Firestore call, bounded; any failure is a {@link Failure} with exit 2 naming what was read. */
public final class Reads {
  /**
   * A hang guard: an operator waits at most this for an unresponsive Firestore. 30 s failed the tool's own end-to-end
   * tests when the emulator beside the test forks answered a read later, with nothing wrong.
   */
  public static final Duration TIMEOUT = Duration.ofMinutes(2);

  private Reads() {}

  public static <T> T await(ApiFuture<T> future, String what) {
    try {
      return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw Failure.firestore("Firestore did not answer within " + TIMEOUT.toSeconds() + " s to read " + what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Failure.firestore("interrupted while reading " + what, e);
    } catch (ExecutionException e) {
      throw Failure.firestore("could not read " + what + ": " + Failure.reason(e.getCause()), e.getCause());
    }
  }

  /**
   * Runs reads made by the pipeline's own code ({@code dev.once.pipeline}), which fails with an unchecked exception
   * naming what it read: a {@link Failure} with exit 2.
   */
  public static <T> T call(Supplier<T> reads, String what) {
    try {
      return reads.get();
    } catch (Failure e) {
      throw e;
    } catch (RuntimeException e) {
      throw Failure.firestore("could not read " + what + ": " + Failure.reason(e), e);
    }
  }
}
