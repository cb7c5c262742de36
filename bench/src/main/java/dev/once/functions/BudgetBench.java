package dev.once.functions;

import dev.once.bench.BenchStack;
import dev.once.bench.Throughput;
import dev.once.config.Settings;
import dev.once.function.Report;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.DocumentSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * dev/bench budget (issue 14): what the spending guard costs. First the Firestore calls and Gemini calls one event
 * adds with a budget set, counted on the functions' own client channel ({@link FirestoreCalls}) and the Gemini
 * stand-in's counters; then throughput of the document flow with the guard off and on, in the same process against
 * the same emulators, rounds alternating which goes first: 4 instances (each its own clients, ledger and budget) with 4
 * events at a time each, DocumentUploaded's concurrency when deployed. The budget never runs out in the throughput
 * runs; a deferral's own cost is counted separately.
 */
public final class BudgetBench {
  private static final int EVENTS = 10;
  private static final int INSTANCES = 4;
  private static final int THREADS_PER_INSTANCE = 4;
  private static final int DOCUMENTS = 160;
  private static final int ROUNDS = 3;
  /** Never reached in these runs. */
  private static final String AMPLE = "1000";
  /** Below one call's estimate: every call is deferred. */
  private static final String EXHAUSTED = "0.01";

  private final BenchStack stack;
  private final FirestoreCalls calls = new FirestoreCalls();
  private final Supplier<com.google.cloud.firestore.Firestore> db;
  private final List<Clients> wired = new ArrayList<>();
  private int documents;

  private BudgetBench(BenchStack stack) {
    this.stack = stack;
    com.google.cloud.firestore.Firestore counted =
        FirestoreCalls.client(BenchStack.PROJECT, stack.firestore.hostPort(), calls);
    this.db = () -> counted;
  }

  public static void main(String[] args) throws Exception {
    // The functions' log lines (the guard's "gemini budget" line among them) would flood this report.
    dev.once.observe.Log.redirect(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    try (BenchStack stack = BenchStack.start()) {
      BudgetBench bench = new BudgetBench(stack);
      try {
        bench.costs();
        bench.throughput();
      } finally {
        for (Clients clients : bench.wired) {
          if (clients.publisher.isBuilt()) {
            clients.publisher.get().close();
          }
        }
      }
    }
  }

  /** A function instance's flow, as DocumentUploaded wires it, with this budget (null: none). */
  private DocumentFlow flow(String mode, String budgetUsd) {
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("ANALYSIS_MODE", mode);
    if (budgetUsd != null) {
      env.put("GEMINI_DAILY_BUDGET_USD", budgetUsd);
    }
    Clients clients = new Clients(Settings.of(env), db);
    wired.add(clients);
    return Wiring.documentFlow(clients);
  }

  private DocumentSource upload() {
    int n = ++documents;
    return CostBench.source(stack.upload("budget/invoice-" + n + ".pdf", InvoicePdf.of("G-" + n)));
  }

  /** One event's calls: Firestore reads and commits, Gemini countTokens and generateContent. */
  private record Cost(long reads, long commits, long countTokens, long generateContent) {}

  private Cost measure(Runnable event) {
    FirestoreCalls.Snapshot before = calls.snapshot();
    long tokens = stack.gemini.count("countTokens");
    long generated = stack.gemini.count("generateContent");
    event.run();
    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);
    return new Cost(spent.reads(), spent.commitCount(), stack.gemini.count("countTokens") - tokens,
        stack.gemini.count("generateContent") - generated);
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

  private static Runnable expect(DocumentFlow flow, DocumentSource document, String outcome) {
    return () -> {
      Report report = flow.handle(document, DocumentFlow.key(document));
      if (!outcome.equals(report.outcome().label())) {
        throw new IllegalStateException("expected " + outcome + ", got " + report);
      }
    };
  }

  private void costs() {
    System.out.printf("What the guard adds to one event (%d events each, every one the same), counted on the functions'"
        + " own Firestore channel and the Gemini stand-in's counters (r: read calls, c: commits, ct: countTokens,"
        + " gc: generateContent); a read of the day's counters is one call of %d document reads. A duplicate never"
        + " reaches the guard (its cost is unchanged).%n%n", EVENTS, dev.once.budget.SpendCounters.SHARDS);
    System.out.printf("%-42s %-24s %-24s %s%n", "event", "guard off", "guard on", "added");
    DocumentFlow syncOff = flow("sync", null);
    DocumentFlow syncOn = flow("sync", AMPLE);
    row("DocumentUploaded sync: first delivery",
        each("sync off", () -> expect(syncOff, upload(), "processed")),
        each("sync on", () -> expect(syncOn, upload(), "processed")));
    DocumentFlow batchOff = flow("batch", null);
    DocumentFlow batchOn = flow("batch", AMPLE);
    row("DocumentUploaded batch: first delivery",
        each("batch off", () -> expect(batchOff, upload(), "processed")),
        each("batch on", () -> expect(batchOn, upload(), "processed")));
    DocumentFlow tight = flow("sync", EXHAUSTED);
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

  private void throughput() throws Exception {
    int threads = INSTANCES * THREADS_PER_INSTANCE;
    System.out.printf("Throughput, sync first deliveries: %d instances x %d at a time, %d documents a run, %d rounds"
        + " alternating which goes first, after a half-size warm-up of each%n", INSTANCES, THREADS_PER_INSTANCE,
        DOCUMENTS, ROUNDS);
    List<DocumentFlow> off = instances(null);
    List<DocumentFlow> on = instances(AMPLE);
    run("off", off, DOCUMENTS / 2, threads);
    run("on", on, DOCUMENTS / 2, threads);
    List<Double> ratios = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      boolean offFirst = round % 2 == 1;
      Throughput.Result first = run(offFirst ? "off" : "on", offFirst ? off : on, DOCUMENTS, threads);
      Throughput.Result second = run(offFirst ? "on" : "off", offFirst ? on : off, DOCUMENTS, threads);
      Throughput.Result guardOff = offFirst ? first : second;
      Throughput.Result guardOn = offFirst ? second : first;
      double ratio = guardOn.perSecond() / guardOff.perSecond();
      ratios.add(ratio);
      System.out.printf("  round %d: guard off %6.1f events/s, guard on %6.1f events/s, on/off = %.2f%n", round,
          guardOff.perSecond(), guardOn.perSecond(), ratio);
    }
    List<Double> sorted = ratios.stream().sorted().toList();
    double median = sorted.get(sorted.size() / 2);
    System.out.printf("%nguard on / guard off = %.2f (median of %d rounds; target >= 0.8): %s%n", median, ROUNDS,
        median >= 0.8 ? "met" : "MISSED");
  }

  private List<DocumentFlow> instances(String budgetUsd) {
    List<DocumentFlow> flows = new ArrayList<>();
    for (int i = 0; i < INSTANCES; i++) {
      flows.add(flow("sync", budgetUsd));
    }
    return flows;
  }

  /** {@code n} new documents, spread over the instances, handled {@code threads} at a time. */
  private Throughput.Result run(String name, List<DocumentFlow> instances, int n, int threads) throws Exception {
    List<Runnable> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(expect(instances.get(i % instances.size()), upload(), "processed"));
    }
    return Throughput.measure(name, threads, events);
  }
}
