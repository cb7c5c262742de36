package dev.once.local.http;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.function.IntConsumer;

/**
 * How a stand-in fails a request it has already carried out: the caller sees an error although the paid call was
 * made, the job created, the file served or the notification recorded. The most common fault of distributed
 * systems, and the one a retry turns into a duplicate.
 */
public sealed interface AmbiguousFailure {
  /** The answer is held for {@code delay} (past the client's deadline), then sent, or dropped if the client left. */
  record Late(Duration delay) implements AmbiguousFailure {
    public Late {
      if (delay.isNegative()) {
        throw new IllegalArgumentException("a late answer's delay must not be negative");
      }
    }
  }

  /** The connection is reset (TCP RST): no HTTP answer at all. */
  record Reset() implements AmbiguousFailure {}

  /** A 5xx in the service's error shape instead of the answer. */
  record ServerError(int status) implements AmbiguousFailure {
    public ServerError {
      if (status < 500 || status > 599) {
        throw new IllegalArgumentException("a server error is a 5xx status, not " + status);
      }
    }
  }

  /**
   * Fails an exchange whose work was done: {@code answer} sends the real answer after a late failure's delay
   * (nothing if the client left meanwhile), {@code reset} resets the connection, {@code serverError} answers the
   * 5xx instead.
   */
  default void inflict(Runnable answer, Runnable reset, IntConsumer serverError) {
    switch (this) {
      case Late late -> {
        if (Pause.of(late.delay())) {
          try {
            answer.run();
          } catch (UncheckedIOException clientGone) {
            // the client stopped waiting: the answer is lost, which is the point
          }
        }
      }
      case Reset r -> reset.run();
      case ServerError error -> serverError.accept(error.status());
    }
  }

  AmbiguousFailure RESET = new Reset();
  AmbiguousFailure SERVER_ERROR = new ServerError(500);

  static AmbiguousFailure late(Duration delay) {
    return new Late(delay);
  }

  static AmbiguousFailure serverError(int status) {
    return new ServerError(status);
  }

  /** {@code late:5s}, {@code reset}, {@code server-error} (500) or {@code server-error:503}. */
  static AmbiguousFailure parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("late:")) {
      return late(Durations.parse(t.substring("late:".length())));
    }
    if (t.equals("reset")) {
      return RESET;
    }
    if (t.equals("server-error")) {
      return SERVER_ERROR;
    }
    if (t.startsWith("server-error:")) {
      try {
        return serverError(Integer.parseInt(t.substring("server-error:".length())));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("server-error:<5xx status>, not " + text);
      }
    }
    throw new IllegalArgumentException("an ambiguous failure is late:<duration>, reset, server-error or"
        + " server-error:<5xx>, not " + text);
  }
}
