package dev.once.firestore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.RecordState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many deliveries of the same keys at once, through the real emulator: 16 threads, 50 keys, 10 deliveries of
 * each. Every delivery goes through its own ledger instance (as separate function instances would), half of
 * them on a second Firestore client.
 */
class DeliveryRaceTest {
  private static final int THREADS = 16;
  private static final int KEYS = 50;
  private static final int DELIVERIES_PER_KEY = 10;

  private final LedgerOptions config = LedgerOptions.defaults();
  private final List<Once> instances = List.of(
      new Once(new FirestoreLedger(TestFirestore.client(), config)),
      new Once(new FirestoreLedger(TestFirestore.connect(), config)));

  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
  private final AtomicInteger overlaps = new AtomicInteger();
  private final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
  private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void clear() {
    TestFirestore.clear();
  }

  private static List<IdempotencyKey> shuffledDeliveries(long seed) {
    List<IdempotencyKey> deliveries = new ArrayList<>();
    for (int k = 0; k < KEYS; k++) {
      for (int d = 0; d < DELIVERIES_PER_KEY; d++) {
        deliveries.add(IdempotencyKey.of("gcs:race/doc-" + k + ".pdf#1"));
      }
    }
    Collections.shuffle(deliveries, new Random(seed));
    return deliveries;
  }

  /** Runs every delivery on THREADS threads released together; an effect counts its runs and overlaps. */
  private void storm(List<IdempotencyKey> deliveries, Once.Effect inner) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < deliveries.size(); i++) {
      IdempotencyKey key = deliveries.get(i);
      Once once = instances.get(i % instances.size());
      done.add(pool.submit(() -> {
        start.await();
        try {
          Outcome outcome = once.run(key, "publish", attempt -> {
            AtomicInteger now = running.computeIfAbsent(key.value(), k -> new AtomicInteger());
            if (now.incrementAndGet() > 1) {
              overlaps.incrementAndGet();
            }
            try {
              return inner.perform(attempt);
            } finally {
              now.decrementAndGet();
            }
          });
          outcomes.computeIfAbsent(outcome.label().label(), k -> new AtomicInteger()).incrementAndGet();
        } catch (TransientTestFailure expected) {
          outcomes.computeIfAbsent("failed_transiently", k -> new AtomicInteger()).incrementAndGet();
        } catch (Throwable unexpected) {
          failures.add(unexpected);
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> future : done) {
      future.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();
  }

  private int outcome(String label) {
    return outcomes.getOrDefault(label, new AtomicInteger()).get();
  }

  @Test
  void concurrentDeliveries_runEachEffectExactlyOnce() throws Exception {
    storm(shuffledDeliveries(1), attempt -> {
      runs.computeIfAbsent(attempt.key().value(), k -> new AtomicInteger()).incrementAndGet();
      return Completion.of(Map.of("by", Thread.currentThread().getName()));
    });

    assertTrue(failures.isEmpty(), "no delivery failed: " + failures);
    assertEquals(KEYS, runs.size(), "every key ran");
    runs.forEach((key, count) -> assertEquals(1, count.get(), key + " ran once"));
    assertEquals(0, overlaps.get());
    assertEquals(KEYS, outcome("processed"));
    assertEquals(KEYS * (DELIVERIES_PER_KEY - 1), outcome("duplicate") + outcome("in_flight"),
        "every other delivery is a duplicate or in flight: " + outcomes);
  }

  /**
   * The first run of every key fails and releases its claim, so the other deliveries race to take it over in
   * transactions. Exactly one takeover wins per key, no two runs of a key overlap, and no transaction exhausts
   * its retry budget (which would surface as LedgerUnavailable in failures).
   */
  @Test
  void releasedClaims_underContention_areTakenOverByExactlyOneDelivery() throws Exception {
    Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();
    Once.Effect failFirstTime = attempt -> {
      runs.computeIfAbsent(attempt.key().value(), k -> new AtomicInteger()).incrementAndGet();
      if (attempt.number() == 1) {
        throw new TransientTestFailure();
      }
      successes.computeIfAbsent(attempt.key().value(), k -> new AtomicInteger()).incrementAndGet();
      return Completion.of(Map.of("attempt", (long) attempt.number()));
    };
    storm(shuffledDeliveries(2), failFirstTime);
    // Keys whose every delivery came before the release still wait: one more delivery each, as a redelivery.
    List<IdempotencyKey> redeliveries = new ArrayList<>();
    for (int k = 0; k < KEYS; k++) {
      redeliveries.add(IdempotencyKey.of("gcs:race/doc-" + k + ".pdf#1"));
    }
    storm(redeliveries, failFirstTime);

    assertTrue(failures.isEmpty(), "no delivery failed, no transaction ran out of retries: " + failures);
    assertEquals(0, overlaps.get(), "no two runs of one key overlapped");
    assertEquals(KEYS, successes.size());
    successes.forEach((key, count) -> assertEquals(1, count.get(), key + " succeeded once"));
    runs.forEach((key, count) -> assertEquals(2, count.get(), key + ": one failed run, one successful run"));
    assertEquals(KEYS, outcome("failed_transiently"));
    FirestoreLedger ledger = new FirestoreLedger(TestFirestore.client(), config);
    for (int k = 0; k < KEYS; k++) {
      var record = ledger.lookup(IdempotencyKey.of("gcs:race/doc-" + k + ".pdf#1"), "publish").orElseThrow();
      assertEquals(RecordState.DONE, record.state());
      assertEquals(2, record.attempts());
      assertEquals(3, record.token(), "claimed, released, taken over: each moved the token on");
    }
  }

  private static final class TransientTestFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TransientTestFailure() {
      super("transient failure injected by the test");
    }
  }
}
