package dev.once.bench;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutures;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.common.util.concurrent.MoreExecutors;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.SideWrites;
import dev.once.local.emulator.FirestoreEmulator;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * dev/bench ledger: the ledger's write paths against a raw write and Google's "idempotent functions" pattern,
 * on the Firestore emulator this process starts, 16 threads, 5,000 distinct keys each; then a duplicate
 * storm. Prints operations/s and ratios: the figures are only comparable within one run on one machine.
 */
public final class LedgerBench {
  private static final String PROJECT = "once-bench";
  private static final int THREADS = 16;
  private static final int KEYS = 5_000;
  private static final int STORM_KEYS = 1_000;
  private static final int STORM_COPIES = 5;
  private static final Duration LEASE = Duration.ofMinutes(10);
  /** Seen here: the emulator is still speeding up after 20,000 writes; 30,000 warm-up operations settle it. */
  private static final int WARM_UP_PASSES = 3;

  private final FirestoreEmulator emulator;
  private final Firestore db;
  private int run;

  private LedgerBench(FirestoreEmulator emulator) {
    this.emulator = emulator;
    this.db = FirestoreClients.forEmulator(PROJECT, emulator.hostPort());
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    try (FirestoreEmulator emulator = FirestoreEmulator.start(Path.of("target/emulators"))) {
      new LedgerBench(emulator).runAll(rounds);
    }
  }

  private record Variant(String name, Function<String, Runnable> operation) {}

  private void runAll(int rounds) throws Exception {
    System.out.printf("Firestore emulator %s (log %s); %d threads, %d distinct keys per variant and round%n",
        emulator.hostPort(), emulator.log(), THREADS, KEYS);
    List<Variant> variants = List.of(
        new Variant(RAW, this::rawWrite),
        new Variant(CLAIM, this::claim),
        new Variant(CLAIM_COMPLETE, this::claimAndComplete),
        new Variant(GUIDANCE, this::guidancePattern));
    // The emulator and the client speed up for a while as the JIT compiles them: warm every variant first,
    // then interleave the variants round by round so any remaining drift touches them all alike.
    for (int warm = 0; warm < WARM_UP_PASSES; warm++) {
      for (Variant variant : variants) {
        measure("warm-up", variant.operation(), KEYS / 2);
      }
    }
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    for (int round = 1; round <= rounds; round++) {
      for (Variant variant : variants) {
        Throughput.Result result = measure(variant.name(), variant.operation(), KEYS);
        rates.computeIfAbsent(variant.name(), k -> new ArrayList<>()).add(result.perSecond());
        System.out.printf("  round %d  %-28s %8.0f ops/s%n", round, variant.name(), result.perSecond());
      }
    }
    double raw = median(rates.get(RAW));
    System.out.println();
    System.out.printf("%-28s %8s   %s%n", "median of " + rounds + " rounds", "ops/s", "ratio to raw write");
    for (Map.Entry<String, List<Double>> entry : rates.entrySet()) {
      double rate = median(entry.getValue());
      System.out.printf("%-28s %8.0f   %5.2fx%n", entry.getKey(), rate, rate / raw);
    }
    System.out.printf("%nclaim / raw write            = %.2f  (target >= 0.8)%n", median(rates.get(CLAIM)) / raw);
    System.out.printf("claim+complete / guidance    = %.2f  (target >= 2.0)%n",
        median(rates.get(CLAIM_COMPLETE)) / median(rates.get(GUIDANCE)));
    storm();
  }

  private static final String RAW = "raw write (set)";
  private static final String CLAIM = "claim (create)";
  private static final String CLAIM_COMPLETE = "claim + complete";
  private static final String GUIDANCE = "guidance (tx lease + set)";

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private Throughput.Result measure(String name, Function<String, Runnable> operation, int keys) throws Exception {
    emulator.clear(PROJECT);
    run++;
    List<Runnable> operations = new ArrayList<>(keys);
    for (int i = 0; i < keys; i++) {
      operations.add(operation.apply("gcs:bench/run-" + run + "/doc-" + i + ".pdf#1"));
    }
    return Throughput.measure(name, THREADS, operations);
  }

  private FirestoreLedger ledger() {
    return new FirestoreLedger(db, LedgerOptions.defaults().withLease(LEASE));
  }

  private Runnable rawWrite(String key) {
    DocumentReference ref = db.collection("raw").document(FirestoreLedger.recordId(IdempotencyKey.of(key), "bench"));
    return () -> get(ref.set(Map.of("key", key, "at", FieldValue.serverTimestamp())));
  }

  private FirestoreLedger sharedLedger;

  private synchronized FirestoreLedger sharedLedger() {
    if (sharedLedger == null) {
      sharedLedger = ledger();
    }
    return sharedLedger;
  }

  private Runnable claim(String key) {
    return () -> require(sharedLedger().claim(IdempotencyKey.of(key), "bench"));
  }

  private Runnable claimAndComplete(String key) {
    return () -> {
      FirestoreLedger ledger = sharedLedger();
      Claim claim = require(ledger.claim(IdempotencyKey.of(key), "bench"));
      ledger.complete(claim, Map.of("ok", true), SideWrites.NONE);
    };
  }

  /**
   * The pattern of Google's "idempotent functions" guidance: a transaction reads the lease document and writes
   * a lease unless a live one exists; after the work, an unconditional set marks it done. Asynchronous, as
   * the ledger's own transactions are, so it is not starved by blocking callbacks.
   */
  private Runnable guidancePattern(String key) {
    DocumentReference ref =
        db.collection("guidance").document(FirestoreLedger.recordId(IdempotencyKey.of(key), "bench"));
    return () -> {
      Boolean acquired = get(db.runAsyncTransaction(tx -> ApiFutures.transform(tx.get(ref), snapshot -> {
        Timestamp until = snapshot.exists() ? snapshot.getTimestamp("leaseExpiresAt") : null;
        if (until != null && until.compareTo(snapshot.getReadTime()) > 0) {
          return false;
        }
        Instant expires = Instant.now().plus(LEASE);
        tx.set(ref, Map.of("state", "CLAIMED", "leaseExpiresAt",
            Timestamp.ofTimeSecondsAndNanos(expires.getEpochSecond(), expires.getNano())));
        return true;
      }, MoreExecutors.directExecutor())));
      if (acquired) {
        get(ref.set(Map.of("state", "DONE", "at", FieldValue.serverTimestamp())));
      }
    };
  }

  /** 1,000 keys × 5 deliveries, shuffled, through Once: exactly 1,000 effect runs. */
  private void storm() throws Exception {
    emulator.clear(PROJECT);
    Once once = new Once(ledger());
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    List<Runnable> deliveries = new ArrayList<>();
    for (int k = 0; k < STORM_KEYS; k++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:storm/doc-" + k + ".pdf#1");
      for (int c = 0; c < STORM_COPIES; c++) {
        deliveries.add(() -> {
          Outcome outcome = once.run(key, "bench", attempt -> {
            runs.computeIfAbsent(key.value(), x -> new AtomicInteger()).incrementAndGet();
            return Completion.of(Map.of());
          });
          outcomes.computeIfAbsent(outcome.label().label(), x -> new AtomicInteger()).incrementAndGet();
        });
      }
    }
    Collections.shuffle(deliveries, new Random(7));
    Throughput.Result result = Throughput.measure("storm", THREADS, deliveries);
    int totalRuns = runs.values().stream().mapToInt(AtomicInteger::get).sum();
    System.out.printf("%nduplicate storm: %d keys x %d deliveries = %d deliveries, %.0f deliveries/s; effect runs %d"
        + " (expected %d), outcomes %s%n", STORM_KEYS, STORM_COPIES, deliveries.size(), result.perSecond(), totalRuns,
        STORM_KEYS, outcomes);
    if (totalRuns != STORM_KEYS) {
      throw new IllegalStateException("an effect ran more or less than once per key: " + totalRuns);
    }
  }

  private static Claim require(ClaimResult result) {
    if (result instanceof ClaimResult.Acquired acquired) {
      return acquired.claim();
    }
    throw new IllegalStateException("expected a fresh claim, got " + result);
  }

  private static <T> T get(ApiFuture<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }
}
