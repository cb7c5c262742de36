package dev.once.local.http;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/** Injected trouble: the next N API requests fail with a status, and every API request can be delayed. */
public final class Faults {
  private final AtomicInteger remaining = new AtomicInteger();
  private volatile int status = 503;
  private volatile Duration latency = Duration.ZERO;

  /** The next {@code count} API requests answer {@code status} (e.g. 429 or 503) instead of being served. */
  public void failNext(int count, int status) {
    if (count < 0 || status < 400 || status > 599) {
      throw new IllegalArgumentException("count must be >= 0 and status an HTTP error code, got " + count + ", " + status);
    }
    this.status = status;
    remaining.set(count);
  }

  public void latency(Duration latency) {
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative");
    }
    this.latency = latency;
  }

  /** Claims one injected failure, if any is left; each failure is used by exactly one request. */
  public OptionalInt takeFailure() {
    while (true) {
      int left = remaining.get();
      if (left <= 0) {
        return OptionalInt.empty();
      }
      if (remaining.compareAndSet(left, left - 1)) {
        return OptionalInt.of(status);
      }
    }
  }

  /** Delays the calling request thread (a virtual thread) by the injected latency. */
  public void delay() {
    Duration d = latency;
    if (!d.isZero()) {
      LockSupport.parkNanos(d.toNanos());
    }
  }
}
