package dev.once.bench;

import com.google.cloud.firestore.Firestore;
import dev.once.budget.SpendCounters;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentSource;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * dev/bench budget (issue 14): what the spending guard costs. First the Firestore calls and Gemini calls one event
 * adds with a budget set, counted on the functions' own client channel ({@link FirestoreCalls}) and the Gemini
 * stand-in's counters; then throughput of the document flow with the guard off and on, side by side in the same
 * process against the same emulators: each variant 2 instances (each its own clients, ledger and budget) with 4
 * events at a time, DocumentUploaded's concurrency when deployed. The budget never runs out in the throughput
 * runs; a deferral's own cost is counted separately.
 */
public final class BudgetBench {
  /** The functions' log lines (the guard's "gemini budget" line among them) would flood this report. */
  private static final Log QUIET =
      Log.to(new PrintStream(OutputStream.nullOutputStream()));
  private static final int EVENTS = 10;
  private static final int LATENCY_EVENTS = 40;
  private static final int INSTANCES = 2;
  private static final int THREADS_PER_INSTANCE = 4;
  private static final int DOCUMENTS = 200;
  private static final int ROUNDS = 5;
  /** Never reached in these runs. */
  private static final String AMPLE = "1000";
  /** Far from its edge for a counted estimate (~0.02 USD), never for a model's ceiling (~0.34 USD): tokens counted. */
  private static final String NEAR_THE_EDGE = "0.60";
  /** Below one call's estimate: every call is deferred. */
  private static final String EXHAUSTED = "0.01";

  private final BenchStack stack;
  private final FirestoreCalls calls = new FirestoreCalls();
  private final Supplier<Firestore> db;
  private final List<Benchmarks> wired = new ArrayList<>();
  private int documents;

  private BudgetBench(BenchStack stack) {
    this.stack = stack;
    Firestore counted =
        FirestoreCalls.client(BenchStack.PROJECT, stack.firestore().hostPort(), calls);
    this.db = () -> counted;
  }

  public static void main(String[] args) throws Exception {
    try (BenchStack stack = BenchStack.start()) {
      BudgetBench bench = new BudgetBench(stack);
      try {
        bench.costs();
        bench.latency();
        // Gemini takes seconds over a one-page invoice and a fraction of one to count its tokens: the guard's cost
        // beside calls that take time (the target; both latencies on the low side, which flatters the guard least),
        // then beside a stand-in that answers at once, where the emulator's CPU is all there is (the worst case).
        double realistic = bench.throughput(Duration.ofSeconds(1), Duration.ofMillis(200), 80, 3);
        double cpuBound = bench.throughput(Duration.ZERO, Duration.ZERO, DOCUMENTS, ROUNDS);
        System.out.printf("%nguard on / guard off: %.2f with generateContent taking 1 s and countTokens 0.2 s"
            + " (target >= 0.8): %s; %.2f when Gemini answers at once and the emulator's CPU is all there is"
            + " (the worst case, not a deployment's)%n", realistic, realistic >= 0.8 ? "met" : "MISSED", cpuBound);
      } finally {
        bench.wired.forEach(Benchmarks::close);
      }
    }
  }

  /** A function instance's flow, as DocumentUploaded wires it, with this budget (null: none). */
  private Function<DocumentSource, Report> flow(String mode, String budgetUsd) {
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("ANALYSIS_MODE", mode);
    if (budgetUsd != null) {
      env.put("GEMINI_DAILY_BUDGET_USD", budgetUsd);
    }
    Benchmarks instance = Benchmarks.of(Settings.of(env), db, QUIET);
    wired.add(instance);
    return instance.documentFlow();
  }

  private DocumentSource upload() {
    int n = ++documents;
    return CostBench.source(stack.upload("budget/invoice-" + n + ".pdf", InvoicePdf.of("G-" + n)));
  }

  /** One event's calls: Firestore reads and commits, Gemini countTokens and generateContent. */
  private record Cost(long reads, long commits, long countTokens, long generateContent) {}

  private Cost measure(Runnable event) {
    FirestoreCalls.Snapshot before = calls.snapshot();
    long tokens = stack.gemini().count("countTokens");
    long generated = stack.gemini().count("generateContent");
    event.run();
    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);
    return new Cost(spent.reads(), spent.commitCount(), stack.gemini().count("countTokens") - tokens,
        stack.gemini().count("generateContent") - generated);
  }

  /** The same kind of event {@code EVENTS} times (after one not counted); every event must cost the same. */
  private Cost each(String what, Supplier<Runnable> prepare) {
    prepare.get().run();
    Cost first = null;
    for (int i = 0; i < EVENTS; i++) {
      Runnable event = prepare.get();
      Cost cost = measure(event);
      if (first != null && !first.equals(cost)) {
        throw new IllegalStateException(what + ": events differ: " + first + " then " + cost);
      }
      first = cost;
    }
    return first;
  }

  private static Runnable expect(Function<DocumentSource, Report> flow, DocumentSource document, String outcome) {
    return () -> {
      Report report = flow.apply(document);
      if (!outcome.equals(report.outcome().label())) {
        throw new IllegalStateException("expected " + outcome + ", got " + report);
      }
    };
  }

  private void costs() {
    System.out.printf("What the guard adds to one event (%d events each, every one the same), counted on the functions'"
        + " own Firestore channel and the Gemini stand-in's counters (r: read calls, c: commits, ct: countTokens,"
        + " gc: generateContent); a read of the day's %d counters is one aggregation, billed one read (the emulator"
        + " answers it by scanning the collection, so it slows as markers pile up: Firestore reads its index). A"
        + " duplicate never reaches the guard (its cost is unchanged).%n%n", EVENTS, SpendCounters.SHARDS);
    System.out.printf("%-42s %-24s %-24s %s%n", "event", "guard off", "guard on", "added");
    Function<DocumentSource, Report> syncOff = flow("sync", null);
    Function<DocumentSource, Report> syncOn = flow("sync", AMPLE);
    row("DocumentUploaded sync: first delivery",
        each("sync off", () -> expect(syncOff, upload(), "processed")),
        each("sync on", () -> expect(syncOn, upload(), "processed")));
    Function<DocumentSource, Report> counted = flow("sync", NEAR_THE_EDGE);
    row("  the day's edge nearer: tokens counted",
        each("sync off", () -> expect(syncOff, upload(), "processed")),
        each("sync counted", () -> expect(counted, upload(), "processed")));
    Function<DocumentSource, Report> batchOff = flow("batch", null);
    Function<DocumentSource, Report> batchOn = flow("batch", AMPLE);
    row("DocumentUploaded batch: first delivery",
        each("batch off", () -> expect(batchOff, upload(), "processed")),
        each("batch on", () -> expect(batchOn, upload(), "processed")));
    Function<DocumentSource, Report> tight = flow("sync", EXHAUSTED);
    List<DocumentSource> deferred = new ArrayList<>();
    Cost first = each("deferred", () -> {
      DocumentSource document = upload();
      deferred.add(document);
      return expect(tight, document, "deferred");
    });
    System.out.printf("%-42s %-24s %s%n", "deferred (the day cannot take it)", "—", describe(first));
    int[] again = {0};
    Cost redelivered = each("deferred again", () -> expect(tight, deferred.get(again[0]++), "deferred"));
    System.out.printf("%-42s %-24s %s%n", "  its redelivery, still deferred", "—", describe(redelivered));
    System.out.println();
  }

  private static void row(String event, Cost off, Cost on) {
    System.out.printf("%-42s %-24s %-24s %s%n", event, describe(off), describe(on),
        (on.reads() - off.reads()) + " reads, " + (on.commits() - off.commits()) + " commits, "
            + (on.countTokens() - off.countTokens()) + " countTokens");
  }

  private static String describe(Cost cost) {
    return cost.reads() + " r + " + cost.commits() + " c"
        + (cost.countTokens() + cost.generateContent() == 0 ? "" : ", " + cost.countTokens() + " ct")
        + (cost.generateContent() == 0 ? "" : " + " + cost.generateContent() + " gc");
  }

  /** One event at a time, alternating guard off and on: what the guard adds to one event's time. */
  private void latency() {
    Function<DocumentSource, Report> off = flow("sync", null);
    Function<DocumentSource, Report> on = flow("sync", AMPLE);
    for (int i = 0; i < LATENCY_EVENTS / 4; i++) {
      expect(off, upload(), "processed").run();
      expect(on, upload(), "processed").run();
    }
    List<Long> offNanos = new ArrayList<>();
    List<Long> onNanos = new ArrayList<>();
    for (int i = 0; i < LATENCY_EVENTS; i++) {
      offNanos.add(timed(expect(off, upload(), "processed")));
      onNanos.add(timed(expect(on, upload(), "processed")));
    }
    double offMs = median(offNanos) / 1e6;
    double onMs = median(onNanos) / 1e6;
    System.out.printf("One event at a time (%d each, alternating, medians): guard off %.1f ms, guard on %.1f ms:"
        + " the guard adds %.1f ms here (a commit and a sum of the day's counters on the emulator)%n%n",
        LATENCY_EVENTS, offMs, onMs, onMs - offMs);
  }

  private static long timed(Runnable event) {
    long started = System.nanoTime();
    event.run();
    return System.nanoTime() - started;
  }

  private static long median(List<Long> values) {
    return values.stream().sorted().toList().get(values.size() / 2);
  }

  /**
   * Both variants at once, on the same machine in the same seconds, so the load other programs put on it (large and
   * changing on a shared machine) weighs on both alike: each works through its own queue of new documents, and when
   * the first has finished its queue, what each has done by then gives the ratio.
   */
  private double throughput(Duration generate, Duration count, int documents, int rounds) throws Exception {
    System.out.printf("Throughput, sync first deliveries, guard off and on side by side, generateContent taking %d ms"
        + " and countTokens %d ms: each %d instances x %d at a time, %d documents each a round, %d rounds after a"
        + " half-size warm-up; the ratio is what the guarded instances did while the others did theirs%n",
        generate.toMillis(), count.toMillis(), INSTANCES, THREADS_PER_INSTANCE, documents, rounds);
    stack.gemini().latency("generateContent", generate);
    stack.gemini().latency("countTokens", count);
    List<Function<DocumentSource, Report>> off = instances(null);
    List<Function<DocumentSource, Report>> on = instances(AMPLE);
    sideBySide(off, on, documents / 2);
    List<Double> ratios = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      Round result = sideBySide(off, on, documents);
      ratios.add(result.ratio());
      System.out.printf("  round %d: when the first queue was done (%.1f s): guard off %d, guard on %d documents;"
          + " on/off = %.2f%n", round, result.seconds(), result.off(), result.on(), result.ratio());
    }
    stack.gemini().latency("generateContent", Duration.ZERO);
    stack.gemini().latency("countTokens", Duration.ZERO);
    List<Double> sorted = ratios.stream().sorted().toList();
    double median = sorted.get(sorted.size() / 2);
    System.out.printf("  guard on / guard off = %.2f (median of %d rounds)%n%n", median, rounds);
    return median;
  }

  private record Round(long off, long on, double seconds) {
    double ratio() {
      return (double) on / off;
    }
  }

  /** Each variant its own {@code n} new documents, handled at the same time; counted when the first is done. */
  private Round sideBySide(List<Function<DocumentSource, Report>> off, List<Function<DocumentSource, Report>> on, int n)
      throws Exception {
    List<DocumentSource> offQueue = uploads(n);
    List<DocumentSource> onQueue = uploads(n);
    AtomicLong offDone = new AtomicLong();
    AtomicLong onDone = new AtomicLong();
    CountDownLatch firstDone = new CountDownLatch(1);
    int threads = INSTANCES * THREADS_PER_INSTANCE;
    ExecutorService pool = Executors.newFixedThreadPool(2 * threads);
    try {
      List<Future<?>> workers = new ArrayList<>();
      workers.addAll(workers(pool, off, offQueue, offDone, firstDone, threads));
      workers.addAll(workers(pool, on, onQueue, onDone, firstDone, threads));
      long started = System.nanoTime();
      firstDone.await(10, TimeUnit.MINUTES);
      Round round = new Round(offDone.get(), onDone.get(), (System.nanoTime() - started) / 1e9);
      for (Future<?> worker : workers) {
        worker.get(10, TimeUnit.MINUTES);
      }
      return round;
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<Future<?>> workers(ExecutorService pool,
      List<Function<DocumentSource, Report>> instances, List<DocumentSource> queue, AtomicLong done,
      CountDownLatch firstDone, int threads) {
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Function<DocumentSource, Report> instance = instances.get(t % instances.size());
      workers.add(pool.submit(() -> {
        for (int i = next.getAndIncrement(); i < queue.size(); i = next.getAndIncrement()) {
          expect(instance, queue.get(i), "processed").run();
          if (done.incrementAndGet() == queue.size()) {
            firstDone.countDown();
          }
        }
      }));
    }
    return workers;
  }

  private List<DocumentSource> uploads(int n) {
    List<DocumentSource> documents = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      documents.add(upload());
    }
    return documents;
  }

  private List<Function<DocumentSource, Report>> instances(String budgetUsd) {
    List<Function<DocumentSource, Report>> flows = new ArrayList<>();
    for (int i = 0; i < INSTANCES; i++) {
      flows.add(flow("sync", budgetUsd));
    }
    return flows;
  }
}
