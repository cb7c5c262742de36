package dev.once.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.cloud.functions.HttpFunction;
import dev.once.guard.Once;
import dev.once.ledger.LedgerOptions;
import dev.once.observe.Log;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * One function run through one {@link Fault}, in process: the guard it is to use ({@link #once()}, over an in-memory
 * ledger whose clock this moves), the endpoint its effect calls ({@link #endpoint()}), and the platform's part —
 * delivering an event ({@link #deliver}) or a client's request ({@link #request}) again until the function
 * acknowledges it, then once more. {@link #verify()} checks that each delivered event's effect was carried out once
 * at the endpoint; {@link FaultMatrix} does so after each fault's run.
 *
 * <pre>{@code
 * @FaultMatrix
 * void theWelcomeIsSentOnce(Faults faults) {
 *   SendWelcome function = new SendWelcome(faults.once(), IdempotentPost.to(faults.endpoint().uri()));
 *   faults.deliver(() -> function.accept(Events.pubSub().attribute("userId", "u-1").build()));
 * }
 * }</pre>
 */
public final class Faults implements AutoCloseable {
  /** How often an event is delivered before the function is taken never to acknowledge it. */
  static final int MAX_DELIVERIES = 10;

  private final Fault fault;
  private final ManualClock clock = new ManualClock();
  private final InMemoryLedger ledger = new InMemoryLedger(LedgerOptions.defaults(), clock);
  private final ByteArrayOutputStream logged = new ByteArrayOutputStream();
  private final Once once;
  private final FakeEndpoint endpoint = FakeEndpoint.start();
  private int events;
  private Integer expected;

  private Faults(Fault fault) {
    this.fault = fault;
    Log log = Log.to(new PrintStream(logged, true, StandardCharsets.UTF_8));
    this.once = new Once(fault == Fault.CRASH_AFTER_EFFECT ? new CrashingLedger(ledger) : ledger).loggingTo(log);
  }

  /** A run through {@code fault}; close it when done (its endpoint listens until then). */
  public static Faults of(Fault fault) {
    return new Faults(fault);
  }

  public Fault fault() {
    return fault;
  }

  /** The guard the function under test must use: its ledger's crashes and clock are this run's. */
  public Once once() {
    return once;
  }

  /** The ledger under the guard, to look at what it recorded (its records, the documents committed beside them). */
  public InMemoryLedger ledger() {
    return ledger;
  }

  /** The store's clock: moved on past a lease when a delivery died holding its claim. */
  public ManualClock clock() {
    return clock;
  }

  /** The endpoint the function's effect calls: {@code IdempotentPost.to(faults.endpoint().uri())}. */
  public FakeEndpoint endpoint() {
    return endpoint;
  }

  /** The guard's log lines so far (one JSON object each). */
  public List<String> logLines() {
    return logged.toString(StandardCharsets.UTF_8).lines().toList();
  }

  /** Overrides what {@link #verify()} expects: {@code effects} carried out in all, rather than one per event. */
  public Faults expectEffects(int effects) {
    expected = effects;
    return this;
  }

  /** One delivery of an event to a CloudEvent function: throwing asks for a redelivery, as the platform takes it. */
  @FunctionalInterface
  public interface Delivery {
    void run() throws Exception;
  }

  /**
   * Delivers one event as the platform does: again after each failure (after the lease when the delivery died), until
   * the function acknowledges it, then once more.
   */
  public void deliver(Delivery delivery) {
    newEvent();
    for (int delivered = 1;; delivered++) {
      Throwable failure = attempt(delivery);
      if (failure == null) {
        break;
      }
      if (delivered == MAX_DELIVERIES) {
        throw new AssertionError("[" + fault + "] the event was never acknowledged in " + MAX_DELIVERIES
            + " deliveries; the last failed with " + failure, failure);
      }
    }
    Throwable again = attempt(delivery);
    if (again != null) {
      throw new AssertionError("[" + fault + "] a delivery of an event acknowledged before failed: " + again, again);
    }
  }

  /**
   * Sends one request to an HTTP function as a client of an Idempotency-Key API does: again, with the same key, after
   * a 5xx, a 409 or a lost answer (the function died), up to {@value #MAX_DELIVERIES} times; then once more, which
   * must be answered the same. Answers the final answer.
   */
  public FakeHttp.Response request(HttpFunction function, Supplier<FakeHttp.Request> request) {
    newEvent();
    FakeHttp.Response last = null;
    for (int sent = 1; sent <= MAX_DELIVERIES; sent++) {
      FakeHttp.Response response = new FakeHttp.Response();
      Throwable failure = attempt(() -> function.service(request.get(), response));
      if (failure != null) {
        continue;
      }
      last = response;
      if (response.status() < 500 && response.status() != 409) {
        break;
      }
    }
    if (last == null) {
      fail("[" + fault + "] the function never answered in " + MAX_DELIVERIES + " requests");
    }
    FakeHttp.Response again = new FakeHttp.Response();
    Throwable failure = attempt(() -> function.service(request.get(), again));
    if (failure != null) {
      throw new AssertionError("[" + fault + "] the retry of a request answered before failed: " + failure, failure);
    }
    if (last.status() < 500) {
      assertEquals(last.status(), again.status(), "[" + fault + "] the retry was answered otherwise");
      assertArrayEquals(last.body(), again.body(), "[" + fault + "] the retry was answered otherwise");
    }
    return last;
  }

  /** One more event: under {@link Fault#ANSWER_LOST}, the answer of its first request carried out is lost. */
  private void newEvent() {
    events++;
    if (fault == Fault.ANSWER_LOST) {
      endpoint.loseNextAnswers(1);
    }
  }

  /** Runs one delivery; its failure, or null. A delivery that died leaves its claim held: the lease runs out first. */
  private Throwable attempt(Delivery delivery) {
    try {
      delivery.run();
      return null;
    } catch (SimulatedCrash crash) {
      clock.advance(LedgerOptions.defaults().lease().plusSeconds(1));
      return crash;
    } catch (Exception e) {
      // Released (or held by another delivery): the platform backs off a little, then delivers again.
      clock.advance(Duration.ofSeconds(1));
      return e;
    }
  }

  /**
   * That every request the endpoint got carried an Idempotency-Key, and that it carried out one effect per event
   * delivered (or as {@link #expectEffects} says).
   */
  public void verify() {
    List<FakeEndpoint.Request> unkeyed = endpoint.received().stream().filter(r -> r.idempotencyKey() == null).toList();
    if (!unkeyed.isEmpty()) {
      fail("[" + fault + "] " + unkeyed.size() + " request(s) came without an Idempotency-Key, so a retry cannot be"
          + " told from a new request: " + endpoint.received());
    }
    int wanted = expected != null ? expected : events;
    if (endpoint.performed() != wanted) {
      fail("[" + fault + "] the endpoint carried out " + endpoint.performed() + " effect(s) for " + wanted
          + " expected (keys " + endpoint.performedKeys() + ", " + endpoint.received().size() + " requests)");
    }
  }

  @Override
  public void close() {
    endpoint.close();
  }
}
