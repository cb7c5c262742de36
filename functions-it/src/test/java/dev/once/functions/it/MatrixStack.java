package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;

import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.genai.Client;
import com.google.genai.types.BatchJob;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.ListBatchJobsConfig;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.JobNames;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.BatchState;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.RecordWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One pipeline stack as the ambiguous-failure matrix drives it: the functions reach Pub/Sub through {@link
 * PubSubFaults}, and the matrix reads back, per document, what happened — from the ledger, the analyses and billing
 * entries, the Gemini stand-in's jobs, the results topic and the notify endpoint.
 */
final class MatrixStack implements AutoCloseable {
  /** A cell's documents: the ambiguous-failure matrix counts each one's calls, bills and messages exactly. */
  static final int DOCUMENTS = 5;
  /** Batch mode: documents per job (BATCH_MAX_DOCUMENTS), so a cell's documents make {@link #JOBS} jobs. */
  static final int JOB_DOCUMENTS = 5;
  static final int JOBS = DOCUMENTS / JOB_DOCUMENTS;
  /** A cell of 5-15 documents with faults settling: minutes on a loaded machine; a hang guard only. */
  private static final Duration SETTLE = Bounds.PATIENT;
  private static final Duration RECONCILE_EVERY = Duration.ofSeconds(2);

  final PipelineStack stack;
  final PubSubFaults pubsub;
  final Client gemini;
  private final FirestoreLedger ledger;

  private MatrixStack(PipelineStack.Config config) {
    pubsub = PubSubFaults.start(PubSubEmulator.shared().hostPort());
    stack = PipelineStack.start(config.withEnv("PUBSUB_EMULATOR_HOST", pubsub.hostPort()));
    gemini = Client.builder().apiKey(stack.environment().get("GEMINI_API_KEY")).vertexAI(false)
        .httpOptions(HttpOptions.builder().baseUrl(stack.gemini.baseUrl()).build()).build();
    ledger = stack.ledger();
  }

  static MatrixStack start(PipelineStack.Config config) {
    return new MatrixStack(config);
  }

  static String folder(String cell) {
    return "matrix/" + cell;
  }

  /**
   * Batch mode gathering full jobs only: {@link #JOB_DOCUMENTS} per job, and no job made early for a document that
   * waited (a cell's documents all arrive within the wait), so a cell's documents make exactly {@link #JOBS} jobs.
   */
  static PipelineStack.Config gathering(PipelineStack.Config config) {
    return config.batch().withEnv("BATCH_MAX_DOCUMENTS", String.valueOf(JOB_DOCUMENTS))
        .withEnv("BATCH_MAX_WAIT_SECONDS", "600");
  }

  /** Uploads the cell's documents, {@code matrix/<cell>/doc-NN.pdf}; returns their keys. */
  List<String> upload(String cell) {
    return uploadFirst(cell, DOCUMENTS);
  }

  /** Uploads the cell's first {@code count} documents. */
  List<String> uploadFirst(String cell, int count) {
    return IntStream.range(0, count).mapToObj(i -> upload(cell, i)).toList();
  }

  String upload(String cell, int i) {
    return PipelineStack.key(stack.upload(String.format("%s/doc-%02d.pdf", folder(cell), i),
        InvoicePdf.of(cell + "-" + i), "application/pdf"));
  }

  /**
   * Waits until every document is notified and recorded so, every message its publishes made is on the topic, and the
   * relay has finished every delivery; with {@code reconcile}, calls the reconciler every few seconds meanwhile, as
   * Cloud Scheduler would.
   */
  void settle(List<String> keys, boolean reconcile) {
    Instant[] reconciled = {Instant.now()};
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      if (reconcile && Instant.now().isAfter(reconciled[0].plus(RECONCILE_EVERY))) {
        reconciled[0] = Instant.now();
        stack.reconcileIfUp();
      }
      return keys.stream().allMatch(key -> !stack.notifiedWith(key).isEmpty()
          && ledger.lookup(IdempotencyKey.of(key), "notify").map(r -> r.state() == RecordState.DONE).orElse(false));
    }), "every document of the cell notified");
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      List<PubsubMessage> published = stack.published();
      return keys.stream().allMatch(key -> attributed(published, key).size() >= pubsub.carriedOut(key));
    }), "every message published on the results topic");
    Await.until(SETTLE, stack::relayIdle, "every delivery finished");
  }

  /** {@code condition}, evaluated at most once per {@code period} (it reads Firestore); false in between. */
  private static BooleanSupplier atMostEvery(Duration period, BooleanSupplier condition) {
    long[] next = {System.nanoTime()};
    return () -> {
      if (System.nanoTime() - next[0] < 0) {
        return false;
      }
      next[0] = System.nanoTime() + period.toNanos();
      return condition.getAsBoolean();
    };
  }

  /** The batch job each document's analysis names (document key → job), once every document's is recorded. */
  Map<String, String> submittedJobs(List<String> keys) {
    Map<String, String> jobs = new LinkedHashMap<>();
    // Batch mode: a submission whose batches.create failed ambiguously is resumed by the reconciler (Cloud Scheduler).
    Instant[] reconciled = {Instant.now()};
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      if (Instant.now().isAfter(reconciled[0].plus(RECONCILE_EVERY))) {
        reconciled[0] = Instant.now();
        stack.reconcileIfUp();
      }
      for (QueryDocumentSnapshot analysis : withKeys(RecordWrites.ANALYSES, keys)) {
        if (analysis.getString("job") != null) {
          jobs.put(analysis.getString("key"), analysis.getString("job"));
        }
      }
      return jobs.size() == keys.size();
    }), "a batch job submitted for every document");
    return jobs;
  }

  /** The ledger keys of the submissions of the gatherings these documents joined ({@code batch:{id}}). */
  List<String> submissionsOf(List<String> keys) {
    return withKeys(RecordWrites.ANALYSES, keys).stream().map(analysis -> "batch:" + analysis.getString("batch"))
        .distinct().toList();
  }

  /** The Gemini stand-in ends these jobs (each named once however many documents it holds), with their answers. */
  void finish(Collection<String> jobs) {
    jobs.stream().distinct().forEach(job -> stack.gemini.finish(job, BatchState.SUCCEEDED));
  }

  /** How each try of {@code effect} for {@code key} ended, oldest first (the ledger's {@code calls}). */
  List<String> outcomes(String key, String effect) {
    return calls(key, effect).stream().map(call -> call.outcome().stored()).toList();
  }

  /** Each try of {@code effect} for {@code key}, oldest first: how it ended, and why it failed. */
  List<Call> calls(String key, String effect) {
    LedgerRecord record = ledger.lookup(IdempotencyKey.of(key), effect)
        .orElseThrow(() -> new AssertionError("no " + effect + " record for " + key));
    return record.calls();
  }

  /**
   * The tries of {@code key}'s own publish that timed out (sync mode; a batch job's documents are published by their
   * chunk's record, and have none of their own).
   */
  long publishTimedOut(String key) {
    return ledger.lookup(IdempotencyKey.of(key), "publish").map(r -> r.calls().stream().filter(MatrixStack::timedOut)
        .count()).orElse(0L);
  }

  /**
   * A failed try whose call ran out of time (the ledger keeps why: the client's timeout, Pub/Sub not accepting within
   * the publisher's bound). On a loaded machine an answer the other side gave as usual can come after the caller's
   * deadline: a try more, recorded, and a call more that the counts must include. A Firestore DEADLINE_EXCEEDED is not
   * one: the matrix injects those, and the ledger must recognise its own commit behind them.
   */
  static boolean timedOut(Call call) {
    return call.outcome() == Call.Outcome.FAILED && call.error() != null
        && TIMED_OUT.matcher(call.error()).find();
  }

  private static final Pattern TIMED_OUT =
      Pattern.compile("(?i)timeout|timed out|did not accept .* within");

  /** The documents of {@code collection} whose {@code key} is one of {@code keys} (at most 30). */
  List<QueryDocumentSnapshot> withKeys(String collection, List<String> keys) {
    try {
      return stack.db.collection(collection).whereIn("key", List.copyOf(keys)).get()
          .get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS).getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + collection, e);
    }
  }

  /**
   * What each document went through. Paid Gemini calls: in sync mode the generateContent tries its analysis recorded
   * as possibly billed (the matrix checks they are all the stand-in carried out); in batch mode the jobs made for it.
   */
  List<MatrixTally.Document> measure(List<String> keys, boolean batchMode) {
    List<QueryDocumentSnapshot> analyses = withKeys(RecordWrites.ANALYSES, keys);
    Map<String, Long> analysisCount = countByKey(analyses);
    Map<String, String> statuses = analyses.stream()
        .collect(Collectors.toMap(d -> d.getString("key"), d -> d.getString("status"), (a, b) -> a + "," + b));
    Map<String, Long> bills = countByKey(withKeys(RecordWrites.BILLING, keys));
    Map<String, Long> jobs = batchMode ? jobsByDocument() : Map.of();
    List<PubsubMessage> published = stack.published();
    List<MatrixTally.Document> documents = new ArrayList<>();
    for (String key : keys) {
      int jobCount = jobs.getOrDefault(IdempotencyKey.of(key).documentId(), 0L).intValue();
      int paid = batchMode ? jobCount : (int) ledger.lookup(IdempotencyKey.of(key), "analyse").orElseThrow().calls()
          .stream().filter(Call::spent).count();
      documents.add(new MatrixTally.Document(key, paid, jobCount, bills.getOrDefault(key, 0L).intValue(),
          analysisCount.getOrDefault(key, 0L).intValue(), statuses.get(key), attributed(published, key).size(),
          stack.notifiedWith(key).size(), (int) outcomes(key, "notify").stream().filter("done"::equals).count()));
    }
    return documents;
  }

  private static Map<String, Long> countByKey(List<QueryDocumentSnapshot> documents) {
    return documents.stream().collect(Collectors.groupingBy(d -> d.getString("key"), Collectors.counting()));
  }

  /**
   * The Gemini stand-in's jobs (every one it ever made), counted by the document their display name names: the
   * document itself, or the gathering whose jobs hold every document that joined it ({@code batch}).
   */
  private Map<String, Long> jobsByDocument() {
    Map<String, Long> jobs = new HashMap<>();
    Map<String, Long> byGathering = new HashMap<>();
    for (BatchJob job : gemini.batches.list(ListBatchJobsConfig.builder().pageSize(1000).build())) {
      JobNames.documentId(job).ifPresent(id -> jobs.merge(id, 1L, Long::sum));
      JobNames.gatheringId(job).ifPresent(id -> byGathering.merge(id, 1L, Long::sum));
    }
    for (QueryDocumentSnapshot analysis : stack.documents(RecordWrites.ANALYSES)) {
      String gathering = analysis.getString("batch");
      if (gathering != null && byGathering.containsKey(gathering)) {
        jobs.merge(analysis.getId(), byGathering.get(gathering), Long::sum);
      }
    }
    return jobs;
  }

  @Override
  public void close() {
    gemini.close();
    stack.close();
    pubsub.close();
  }
}
