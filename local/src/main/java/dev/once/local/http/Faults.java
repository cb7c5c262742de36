package dev.once.local.http;

import dev.once.wire.http.Counters;
import dev.once.wire.http.HttpError;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * Injected trouble: the next N API requests fail with a status before anything is done, every API request (or every
 * request of one operation) can be delayed, and the next N requests of one operation can be carried out and then fail
 * ambiguously (late, reset, 5xx).
 */
public final class Faults {
  private final AtomicInteger remaining = new AtomicInteger();
  private volatile int status = 503;
  private volatile Duration latency = Duration.ZERO;
  private final Map<String, Duration> operationLatency = new ConcurrentHashMap<>();
  private final Map<String, Held> held = new ConcurrentHashMap<>();
  private final Map<String, Armed> ambiguous = new ConcurrentHashMap<>();
  private final Map<String, Gate> gates = new ConcurrentHashMap<>();

  /** The latency armed for the next requests of one operation, and how many of them it still takes. */
  private record Held(Duration latency, AtomicInteger remaining) {}

  /** The ambiguous failure armed for one operation, and how many of its requests it still takes. */
  private record Armed(AmbiguousFailure failure, AtomicInteger remaining) {}

  /** The next {@code count} API requests answer {@code status} (e.g. 429 or 503) instead of being served. */
  public void failNext(int count, int status) {
    if (count < 0 || status < 400 || status > 599) {
      throw new IllegalArgumentException(
          "count must be >= 0 and status an HTTP error code, got " + count + ", " + status);
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

  /**
   * Every request of {@code operation} takes {@code latency} instead of the latency of all the others; zero gives
   * it theirs again.
   */
  public void latency(String operation, Duration latency) {
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative");
    }
    if (latency.isZero()) {
      operationLatency.remove(operation);
    } else {
      operationLatency.put(operation, latency);
    }
  }

  /**
   * The next {@code count} requests of {@code operation} take {@code latency}, whatever is set later; the ones after
   * them the latency they had. A test holding one call in flight (to kill its caller meanwhile) arms this instead of
   * a latency it turns off again: the call taking over from it can never meet the delay. A count of 0 disarms.
   */
  public void latencyNext(String operation, int count, Duration latency) {
    if (count < 0 || latency.isNegative()) {
      throw new IllegalArgumentException("count and latency must not be negative, got " + count + ", " + latency);
    }
    if (count == 0) {
      held.remove(operation);
    } else {
      held.put(operation, new Held(latency, new AtomicInteger(count)));
    }
  }

  /**
   * Holds every request of {@code operation} from now on until the returned gate is released: a test that needs a
   * call in flight while it does something else releases it when it is done, however long that took on a loaded
   * machine, instead of hoping a fixed latency outlasts it. Replaces a gate armed before for the operation (which
   * stays as it was: release it too).
   */
  public Gate hold(String operation) {
    Gate gate = new Gate(operation, () -> gates.remove(operation));
    gates.put(operation, gate);
    return gate;
  }

  /** Lets every held request go (the service is stopping). */
  public void releaseAll() {
    List.copyOf(gates.values()).forEach(Gate::release);
  }

  /** Requests held until {@link #release}; never held longer than {@link #HANG_GUARD}, should a test forget. */
  public static final class Gate {
    /** A request is let go after this even if the test never releases it: a bound on a test's mistake only. */
    public static final Duration HANG_GUARD = Duration.ofMinutes(10);
    private final String operation;
    private final Runnable disarm;
    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicInteger arrived = new AtomicInteger();

    private Gate(String operation, Runnable disarm) {
      this.operation = operation;
      this.disarm = disarm;
    }

    /** A gate no operation arms: a stand-in holds what it chooses at it ({@link Receiver#holdNext}). */
    static Gate standalone(String what) {
      return new Gate(what, () -> {});
    }

    /** How many requests reached the gate so far (held now, or let go by the release). */
    public int arrived() {
      return arrived.get();
    }

    /** Lets every held request go on, and holds no later one. */
    public void release() {
      disarm.run();
      released.countDown();
    }

    void pass() {
      arrived.incrementAndGet();
      try {
        if (!released.await(HANG_GUARD.toMillis(), TimeUnit.MILLISECONDS)) {
          release();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public String toString() {
      return "gate on " + operation + " (" + arrived.get() + " arrived, "
          + (released.getCount() == 0 ? "released)" : "holding)");
    }
  }

  /**
   * What every API request meets first: the next injected failure, thrown in the service's error shape and counted
   * as {@code injectedFailures} (nothing is carried out), else a gate holding {@code operation} ({@link #hold}), then
   * the latency armed for its next requests ({@link #latencyNext}), else the latency injected for {@code operation}.
   * A request delayed by a latency is counted as {@code OPERATION.delayed}, so a test asserts which calls were held
   * from what the service did, not from how long its client waited.
   */
  public void inject(Counters counters, String operation, IntFunction<HttpError> inServiceShape) {
    OptionalInt injected = takeFailure();
    if (injected.isPresent()) {
      counters.increment("injectedFailures");
      throw inServiceShape.apply(injected.getAsInt());
    }
    Gate gate = gates.get(operation);
    if (gate != null) {
      counters.increment(operation + ".held");
      gate.pass();
    }
    Duration delay = takeHeld(operation).orElseGet(() -> operationLatency.getOrDefault(operation, latency));
    if (!delay.isZero()) {
      counters.increment(operation + ".delayed");
    }
    delay(delay);
  }

  /** Claims the armed latency for one request of {@code operation}, if one is left. */
  private Optional<Duration> takeHeld(String operation) {
    Held armed = held.get(operation);
    return armed != null && claim(armed.remaining()) ? Optional.of(armed.latency()) : Optional.empty();
  }

  /** Takes one of what is left, if anything is: each is used by exactly one request. */
  private static boolean claim(AtomicInteger left) {
    return left.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
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

  /**
   * The next {@code count} requests of {@code operation} that are carried out then fail as {@code failure} says; a
   * request the service refuses (bad input) is answered as usual and does not use one up. Replaces what was armed
   * for that operation before; a count of 0 disarms it.
   */
  public void ambiguousNext(String operation, int count, AmbiguousFailure failure) {
    if (count < 0) {
      throw new IllegalArgumentException("count must be >= 0, got " + count);
    }
    if (count == 0) {
      ambiguous.remove(operation);
    } else {
      ambiguous.put(operation, new Armed(failure, new AtomicInteger(count)));
    }
  }

  /** Claims the ambiguous failure for one carried-out request of {@code operation}, if one is armed. */
  public Optional<AmbiguousFailure> takeAmbiguous(String operation) {
    Armed armed = ambiguous.get(operation);
    if (armed == null) {
      return Optional.empty();
    }
    while (true) {
      int left = armed.remaining().get();
      if (left <= 0) {
        return Optional.empty();
      }
      if (armed.remaining().compareAndSet(left, left - 1)) {
        return Optional.of(armed.failure());
      }
    }
  }

  /** Delays the calling request thread (a virtual thread). */
  private static void delay(Duration latency) {
    if (!latency.isZero()) {
      LockSupport.parkNanos(latency.toNanos());
    }
  }
}
