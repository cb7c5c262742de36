package dev.once.bench;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.key.IdempotencyKey;
import dev.once.local.gemini.AnswerFault;
import dev.once.local.gemini.BatchState;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.FirestoreBatchGauges;
import dev.once.pipeline.PipelineSetting;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * dev/bench batch (issue 23): a burst of documents in batch mode, through the real flows wired as the entry points
 * wire them ({@link Benchmarks}), in this process against the emulator and the Gemini stand-in (with Google's limits:
 * 100 concurrent jobs, 20 MB inline). Prints the jobs made and documents per job, the longest wait of a document
 * before its job was made, the Firestore calls per document (counted on the functions' own channel, {@link
 * FirestoreCalls}), Gemini's cost per document against sync pricing of the same answers, and how long each job's
 * completion takes (BatchCompleted's, which the webhook no longer waits for), how the answers were matched to their
 * documents and how many documents were run again; then the webhook's own answer time for one job
 * ({@link WebhookAckBench}). The burst's answers come back as users report them for large jobs, not as the docs promise
 * them: out of order and without their metadata (python-genai#1909, #2008; {@code -Donce.bench.faults=} sets others,
 * e.g. {@code shuffled,misfiled}, or none).
 */
public final class BatchBench {
  private static final int DOCUMENTS = Integer.getInteger("once.bench.documents", 1000);
  private static final int UPLOADERS = 8;
  /** The deployment's defaults: a burst fills jobs by count before its oldest document has waited too long. */
  private static final int PER_JOB = Integer.getInteger("once.bench.perJob",
      Integer.parseInt(PipelineSetting.BATCH_MAX_DOCUMENTS.defaultValue()));
  private static final Duration MAX_WAIT =
      Duration.ofSeconds(Long.parseLong(PipelineSetting.BATCH_MAX_WAIT_SECONDS.defaultValue()));
  private static final Duration DEADLINE = Duration.ofMinutes(10);
  /**
   * The daily budget in US dollars, so the burst pays for the spending guard as a deployment does (Terraform turns it
   * on): 1,000 USD, which the burst never nears, so every reservation is the cheap one (far from the day's edge) and
   * none is deferred. Terraform's default of 20 USD ({@code -Donce.bench.budget=20}) defers part of a burst of 1,000 in
   * batch mode: each document's reservation is held until its job completes. {@code none}: no guard.
   */
  private static final String BUDGET = System.getProperty("once.bench.budget", "1000");
  private static final AnswerFault[] FAULTS = AnswerFault.parse(System.getProperty("once.bench.faults",
      "shuffled,no-metadata").replace("none", "")).toArray(AnswerFault[]::new);

  public static void main(String[] args) throws Exception {
    try (BenchStack stack = BenchStack.start()) {
      new BatchBench().run(stack);
      new WebhookAckBench().run(stack);
    }
  }

  private void run(BenchStack stack) throws Exception {
    FirestoreCalls calls = new FirestoreCalls();
    Firestore counted =
        FirestoreCalls.client(BenchStack.PROJECT, stack.firestore().hostPort(), calls);
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("ANALYSIS_MODE", "batch");
    env.put("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB));
    env.put("BATCH_MAX_WAIT_SECONDS", String.valueOf(MAX_WAIT.toSeconds()));
    if (!BUDGET.equals("none")) {
      env.put("GEMINI_DAILY_BUDGET_USD", BUDGET);
    }
    Benchmarks instance = Benchmarks.of(Settings.of(env), () -> counted, Log.stdout());
    Function<DocumentSource, Report> flow = instance.documentFlow();
    Runnable submission = instance.batchSubmission();
    Function<IdempotencyKey, Report> completion = instance.completionFlow();
    long jobsBefore = stack.gemini().count("batchGenerateContent");

    List<DocumentSource> documents = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      documents.add(CostBench.source(stack.upload("batch-bench/invoice-" + i + ".pdf", InvoicePdf.of("B-" + i))));
    }
    FirestoreCalls.Snapshot start = calls.snapshot();
    Instant burst = Instant.now();
    ExecutorService uploads = Executors.newFixedThreadPool(UPLOADERS);
    List<Future<?>> handled = new ArrayList<>();
    List<Long> uploadMillis = Collections.synchronizedList(new ArrayList<>());
    for (DocumentSource document : documents) {
      handled.add(uploads.submit(() -> {
        long t0 = System.nanoTime();
        flow.apply(document);
        uploadMillis.add((System.nanoTime() - t0) / 1_000_000);
      }));
    }
    for (Future<?> done : handled) {
      done.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }
    uploads.shutdown();
    Duration burstTook = Duration.between(burst, Instant.now());
    // What is left is not a full job: the reconciler (Cloud Scheduler) submits it once its oldest waited MAX_WAIT.
    Instant deadline = Instant.now().plus(DEADLINE);
    while (!instance.queries().queued(1).isEmpty()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("documents still queued after " + DEADLINE);
      }
      Thread.sleep(500); // the reconciler's schedule, shortened: a bench, not a test
      submission.run();
    }
    long jobs = stack.gemini().count("batchGenerateContent") - jobsBefore;
    List<QueryDocumentSnapshot> analyses = mine(stack);
    Duration longestWait = Duration.ZERO;
    for (QueryDocumentSnapshot analysis : analyses) {
      Instant queued = analysis.getTimestamp("queuedAt").toDate().toInstant();
      Instant submitted = analysis.getTimestamp("updatedAt").toDate().toInstant();
      Duration waited = Duration.between(queued, submitted);
      longestWait = waited.compareTo(longestWait) > 0 ? waited : longestWait;
    }
    FirestoreCalls.Snapshot queuing = calls.snapshot().since(start);

    List<String> names = analyses.stream().map(a -> a.getString("job")).distinct().toList();
    names.forEach(name -> {
      stack.gemini().answerFaults(name, FAULTS);
      stack.gemini().finish(name, BatchState.SUCCEEDED);
    });
    FirestoreCalls.Snapshot beforeCompletion = calls.snapshot();
    List<Long> completionMs = new ArrayList<>();
    List<Long> completionCalls = new ArrayList<>();
    Map<String, Integer> matched = new TreeMap<>();
    int rerun = 0;
    int unattributed = 0;
    for (String name : names) {
      long t0 = System.nanoTime();
      Report report = completion.apply(GeminiCompletionKeys.ofName(name));
      completionMs.add((System.nanoTime() - t0) / 1_000_000);
      // A job's two webhooks make two hand-offs: the second finds it completing, then (redelivered) completed.
      for (int again = 0; again < 2; again++) {
        long t1 = System.nanoTime();
        completion.apply(GeminiCompletionKeys.ofName(name));
        completionCalls.add((System.nanoTime() - t1) / 1_000_000);
      }
      tally(report, matched);
      rerun += count(report, "rerun");
      unattributed += count(report, "unattributed");
    }
    completionCalls.addAll(completionMs);
    FirestoreCalls.Snapshot completing = calls.snapshot().since(beforeCompletion);
    Collections.sort(completionMs);
    // Documents whose answer could not be matched go into another job (from an input file): made and completed here.
    int rerunJobs = 0;
    while (!instance.queries().queued(1).isEmpty()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("documents run again still queued after " + DEADLINE);
      }
      List<String> before = stack.gemini().batchNames();
      submission.run();
      for (String name : stack.gemini().batchNames()) {
        if (!before.contains(name)) {
          rerunJobs++;
          stack.gemini().finish(name, BatchState.SUCCEEDED);
          Report report = completion.apply(GeminiCompletionKeys.ofName(name));
          tally(report, matched);
          unattributed += count(report, "unattributed");
        }
      }
    }

    // MessageDelivered: each result notified once, as its Pub/Sub delivery would.
    List<PubsubMessage> results = results(stack, analyses.size());
    Benchmarks.Delivery delivery = instance.deliveryFlow();
    FirestoreCalls.Snapshot beforeDelivery = calls.snapshot();
    List<Long> deliveryMillis = new ArrayList<>();
    for (PubsubMessage result : results) {
      long t0 = System.nanoTime();
      delivery.deliver(result.getMessageId(), result.getData().toByteArray(), result.getAttributesMap());
      deliveryMillis.add((System.nanoTime() - t0) / 1_000_000);
    }
    FirestoreCalls.Snapshot delivering = calls.snapshot().since(beforeDelivery);

    // GeminiReconciler: Cloud Scheduler runs it every 10 minutes, burst or not: six runs in the burst's hour.
    FirestoreCalls.Snapshot beforeReconcile = calls.snapshot();
    long r0 = System.nanoTime();
    instance.reconciliation().get();
    new FirestoreBatchGauges(counted).read(); // the run's gauge line
    long reconcileMillis = (System.nanoTime() - r0) / 1_000_000;
    FirestoreCalls.Billed reconciling = calls.snapshot().since(beforeReconcile).documents();

    long batchCost = 0;
    long syncCost = 0;
    PriceTable prices = PriceTable.fromSettings(instance.settings());
    for (QueryDocumentSnapshot bill : stack.db.collection("billing").get().get().getDocuments()) {
      if (bill.getString("key") == null || !bill.getString("key").contains("/batch-bench/")) {
        continue;
      }
      Usage usage = new Usage(bill.getLong("promptTokens"), bill.getLong("outputTokens"), bill.getLong("totalTokens"));
      batchCost += bill.getLong("costMicroUsd");
      syncCost += prices.costMicroUsd(bill.getString("model"), usage, false,
          bill.getTimestamp("billedAt").toDate().toInstant()).orElse(0L);
    }

    System.out.printf("batch mode, a burst of %d documents (%d uploaders), jobs of up to %d, submitted after %d s at"
        + " the latest; daily budget %s; Gemini stand-in with Google's limits%n%n", DOCUMENTS, UPLOADERS, PER_JOB,
        MAX_WAIT.toSeconds(), BUDGET.equals("none") ? "none (the spending guard off)" : BUDGET + " USD");
    System.out.printf("%-52s %s%n", "burst handled (queued) in", burstTook.toMillis() + " ms");
    System.out.printf("%-52s %d (%.1f documents per job)%n", "batch jobs created", jobs, (double) DOCUMENTS / jobs);
    System.out.printf("%-52s %.1f s%n", "longest wait of a document before its job was made",
        longestWait.toMillis() / 1000.0);
    System.out.printf("%-52s %.2f reads, %.2f commits (%s)%n", "Firestore calls per document, queue to submission",
        (double) queuing.reads() / DOCUMENTS, (double) queuing.commitCount() / DOCUMENTS, queuing.calls());
    System.out.printf("%-52s %.2f reads, %.2f commits (%s; with 2 hand-offs absorbed a job)%n",
        "Firestore calls per document, completion", (double) completing.reads() / DOCUMENTS,
        (double) completing.commitCount() / DOCUMENTS, completing.calls());
    System.out.printf("%-52s %.1f µUSD batch, %.1f µUSD sync (%.2fx)%n", "Gemini cost per document",
        (double) batchCost / DOCUMENTS, (double) syncCost / DOCUMENTS, (double) batchCost / syncCost);
    System.out.printf("%-52s %s%n", "answers came back", FAULTS.length == 0 ? "as documented (in order, keyed)"
        : Arrays.toString(FAULTS).toLowerCase(Locale.ROOT));
    System.out.printf("%-52s %s; %d given to no document%n", "answers matched to their documents", matched,
        unattributed);
    System.out.printf("%-52s %d (in %d jobs from an input file)%n", "documents run again", rerun, rerunJobs);
    System.out.printf("%-52s p50 %d ms, p99 %d ms, max %d ms (%d jobs; BatchCompleted's, not waited for)%n",
        "completion of a job of " + PER_JOB, completionMs.get(completionMs.size() / 2),
        completionMs.get(Math.min(completionMs.size() - 1, (int) Math.ceil(completionMs.size() * 0.99) - 1)),
        completionMs.get(completionMs.size() - 1), completionMs.size());

    int reconcilesAnHour = 6;
    FirestoreCalls.Billed hourOfReconciling = new FirestoreCalls.Billed(reconciling.reads() * reconcilesAnHour,
        reconciling.writes() * reconcilesAnHour, reconciling.deletes() * reconcilesAnHour,
        reconciling.expiring() * reconcilesAnHour);
    new BurstCost(DOCUMENTS)
        .add(new BurstCost.Part(ListPrices.Function.DOCUMENT_UPLOADED, "queue, gather, submit", queuing.documents(),
            DOCUMENTS, uploadMillis, true))
        .add(new BurstCost.Part(ListPrices.Function.GEMINI_WEBHOOK, "2 deliveries a job, handed off",
            // Not run here (WebhookAckBench times it under the invoker): one ledger read each, well under 100 ms.
            new FirestoreCalls.Billed(2 * jobs, 0, 0, 0), 2 * jobs, Collections.nCopies((int) (2 * jobs), 0L),
            false))
        .add(new BurstCost.Part(ListPrices.Function.BATCH_COMPLETED, "completion, 2 hand-offs absorbed",
            completing.documents(), 3L * names.size(), completionCalls, false))
        .add(new BurstCost.Part(ListPrices.Function.MESSAGE_DELIVERED, "notify each result", delivering.documents(),
            results.size(), deliveryMillis, true))
        .add(new BurstCost.Part(ListPrices.Function.GEMINI_RECONCILER, reconcilesAnHour + " runs an hour",
            hourOfReconciling, reconcilesAnHour, Collections.nCopies(reconcilesAnHour, reconcileMillis), false))
        .add(new BurstCost.Messages("results published and pushed to MessageDelivered", 2L * results.size(),
            results.stream().mapToDouble(m -> 2 * ListPrices.pubsub(m.getSerializedSize())).sum()))
        .add(new BurstCost.Messages("uploads' finalize events, through Eventarc (~1 KB each way)", 2L * DOCUMENTS,
            2.0 * DOCUMENTS * ListPrices.pubsub(ListPrices.PUBSUB_MIN_BYTES)))
        .print(System.out, (double) batchCost / DOCUMENTS);
    instance.close();
  }

  /** The burst's results, pulled from the results topic's tap until all {@code expected} are there. */
  private static List<PubsubMessage> results(BenchStack stack, int expected) throws Exception {
    List<PubsubMessage> ours = new ArrayList<>();
    Instant deadline = Instant.now().plus(Duration.ofMinutes(2));
    while (ours.size() < expected && Instant.now().isBefore(deadline)) {
      for (PubsubMessage m : stack.pullResults()) {
        if (m.getAttributesMap().getOrDefault("idempotency_key", "").contains("/batch-bench/")) {
          ours.add(m);
        }
      }
    }
    if (ours.size() < expected) {
      throw new IllegalStateException(ours.size() + " results of " + expected + " published");
    }
    return ours;
  }

  /** Adds up a completion's {@code matched} detail: how many answers went to their documents, and how. */
  private static void tally(Report report, Map<String, Integer> matched) {
    if (report.details().get("matched") instanceof Map<?, ?> byHow) {
      byHow.forEach((how, n) -> matched.merge(String.valueOf(how), ((Number) n).intValue(), Integer::sum));
    }
  }

  private static int count(Report report, String detail) {
    return report.details().get(detail) instanceof Number n ? n.intValue() : 0;
  }

  private static List<QueryDocumentSnapshot> mine(BenchStack stack) throws Exception {
    return stack.db.collection("analyses").whereEqualTo("status", "submitted").get().get().getDocuments().stream()
        .filter(a -> a.getString("key") != null && a.getString("key").contains("/batch-bench/")).toList();
  }
}
