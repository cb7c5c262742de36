package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.WriteBatch;
import com.google.genai.Client;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.ListBatchJobsConfig;
import com.google.genai.types.UploadFileConfig;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.config.Settings;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.InvoicePrompt;
import dev.once.gemini.PriceTable;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.FirestoreLedger;
import dev.once.ledger.LedgerConfig;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.eventarc.RetryPolicy;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Records;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 11's matrix: every external call on a document's way, carried out by the other side while its caller sees an
 * error — the answer after the caller's deadline, the connection reset, a 5xx. The calls: Gemini generateContent
 * (sync); batches.create, batches.get and the results download (batch); the Pub/Sub publish; the notify POST; and the
 * Firestore commit that completes a claim (applied, its answer lost). Ten documents per cell, every function under
 * the real invoker; each cell counts, per document, the Gemini calls that may have been billed, the batch jobs, bills,
 * analyses, messages on the results topic (copies included) and notifications, asserts them exactly, and prints its
 * row of the table kept in BENCHMARKS.md.
 *
 * <p>Two stacks, one per analysis mode. A cell whose faults are armed on a stand-in (its next N calls of one
 * operation) runs alone on its stack, over documents of its own; cells whose faults target keys (the publish, the
 * commit) run side by side.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AmbiguousFailureMatrixIT {
  private static final int DOCUMENTS = 10;
  private static final int LEASE_SECONDS = 4;
  private static final Duration GEMINI_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration NOTIFY_TIMEOUT = Duration.ofSeconds(2);
  /** MessagePublisher's bound on one publish RPC; its client retries a failed one within 30 s. */
  private static final Duration PUBLISH_RPC_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration SETTLE = Duration.ofMinutes(2);
  private static final Duration RECONCILE_EVERY = Duration.ofSeconds(3);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<MatrixTally> TABLE = Collections.synchronizedList(new ArrayList<>());

  private static PubSubFaults syncPubSub;
  private static PubSubFaults batchPubSub;
  private static PipelineStack sync;
  private static PipelineStack batch;
  private static Client gemini;
  private static Path faultLog;

  /** How a call the other side carried out fails for its caller. */
  enum Kind {
    LATE("late"), RESET("reset"), SERVER_ERROR("500");

    final String label;

    Kind(String label) {
      this.label = label;
    }

    /** The failure, for a caller that waits {@code deadline}: a late answer comes two seconds after it. */
    AmbiguousFailure after(Duration deadline) {
      return switch (this) {
        case LATE -> AmbiguousFailure.late(deadline.plusSeconds(2));
        case RESET -> AmbiguousFailure.RESET;
        case SERVER_ERROR -> AmbiguousFailure.serverError(500);
      };
    }

    /** The system property that makes a commit lose its answer this way ({@code CrashPoints.LostAnswer}). */
    String answerLostProperty() {
      return "-Donce.fault.answer-lost." + name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
  }

  @BeforeAll
  static void start() throws IOException {
    faultLog = Path.of(System.getProperty("once.logDir", "target/it-logs"),
        "ambiguous-failure-matrix-" + ProcessHandle.current().pid() + ".faults").toAbsolutePath();
    Files.createDirectories(faultLog.getParent());
    Files.deleteIfExists(faultLog);
    syncPubSub = PubSubFaults.start(PubSubEmulator.shared().hostPort());
    batchPubSub = PubSubFaults.start(PubSubEmulator.shared().hostPort());
    // Short bounds, so late answers come within seconds; a short lease, so a claim left behind by a lost answer is
    // taken over seconds later; a patient relay, as Eventarc is.
    PipelineStack.Config config = new PipelineStack.Config("sync", LEASE_SECONDS,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
            .withMaxAge(Duration.ofMinutes(5)),
        Map.of("GEMINI_TIMEOUT_SECONDS", String.valueOf(GEMINI_TIMEOUT.toSeconds()),
            "NOTIFY_TIMEOUT_SECONDS", String.valueOf(NOTIFY_TIMEOUT.toSeconds())));
    CompletableFuture<PipelineStack> syncStarting = CompletableFuture.supplyAsync(
        () -> PipelineStack.start(config.withEnv("PUBSUB_EMULATOR_HOST", syncPubSub.hostPort())));
    batch = PipelineStack.start(config.batch().withEnv("PUBSUB_EMULATOR_HOST", batchPubSub.hostPort()));
    sync = syncStarting.join();
    sync.restart("DocumentUploaded", answerLost("complete:analyse", kind -> "gcs:inbox/" + commitFolder(kind) + "/.*"));
    gemini = Client.builder().apiKey("local-test-key").vertexAI(false)
        .httpOptions(HttpOptions.builder().baseUrl(batch.gemini.baseUrl()).build()).build();
  }

  @AfterAll
  static void stop() throws IOException {
    List<String> rows = new ArrayList<>(List.of(MatrixTally.HEADER));
    TABLE.stream().map(MatrixTally::row).forEach(rows::add);
    Path table = faultLog.resolveSibling("ambiguous-failure-matrix.md");
    Files.write(table, rows, StandardCharsets.UTF_8);
    System.out.println("ambiguous-failure matrix (per document; written to " + table + "):\n" + String.join("\n", rows));
    for (AutoCloseable part : new AutoCloseable[] {gemini, sync, batch, syncPubSub, batchPubSub}) {
      try {
        if (part != null) {
          part.close();
        }
      } catch (Exception ignored) {
        // teardown
      }
    }
  }

  // ---------------------------------------------------------------------------------------------- sync mode

  /** generateContent carried out, then failed: every paid call is a try recorded on the ledger; one bill. */
  @Order(1)
  @ParameterizedTest(name = "generateContent, {0}")
  @EnumSource(Kind.class)
  void generateContent(Kind kind) {
    Instant started = Instant.now();
    long paidBefore = sync.gemini.count("generateContent.carriedOut");
    long faultsBefore = sync.gemini.count("generateContent.ambiguous");
    sync.gemini.ambiguousNext("generateContent", DOCUMENTS, kind.after(GEMINI_TIMEOUT));
    List<String> keys = upload(sync, "generateContent-" + kind.label);
    settle(sync, syncPubSub, keys, false);
    sync.gemini.ambiguousNext("generateContent", 0, AmbiguousFailure.RESET);
    int faults = (int) (sync.gemini.count("generateContent.ambiguous") - faultsBefore);
    MatrixTally tally = tally("generateContent", kind, faults, started, measure(sync, syncPubSub, keys, false));

    assertEquals(DOCUMENTS, faults, "every injected failure was met");
    assertSyncOutcomes(tally);
    assertEquals(sync.gemini.count("generateContent.carriedOut") - paidBefore, tally.sum(MatrixTally.Document::paid),
        "every paid call is a try the ledger recorded before it was made");
    assertEquals(DOCUMENTS + faults, tally.sum(MatrixTally.Document::paid), "one call per document, one per failure");
    for (String key : keys) {
      List<String> tries = outcomes(sync, key, "analyse");
      assertEquals("done", tries.get(tries.size() - 1), key + ": " + tries);
      assertTrue(tries.subList(0, tries.size() - 1).stream().allMatch("failed"::equals),
          "each failed call is recorded as a try that may have been billed: " + tries);
    }
    assertEquals(faults, keys.stream().mapToLong(key -> outcomes(sync, key, "analyse").stream()
        .filter("failed"::equals).count()).sum(), "every failure is a failed try on the ledger");
  }

  /**
   * The publish carried out, then failed: the client publishes again, so a copy lands on the topic under the same
   * {@code idempotency_key}, which MessageDelivered drops: one notification. Late answers and INTERNAL fail one call
   * each and run side by side; a reset fails every call in flight on the connection, so its documents go one at a
   * time.
   */
  @Order(2)
  @Test
  void publish() {
    Instant started = Instant.now();
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    for (Kind kind : List.of(Kind.LATE, Kind.SERVER_ERROR)) {
      syncPubSub.failFirstPublishOf("gcs:inbox/" + folder("publish-" + kind.label) + "/", kind.after(PUBLISH_RPC_TIMEOUT));
      cells.put(kind, upload(sync, "publish-" + kind.label));
    }
    settle(sync, syncPubSub, cells.values().stream().flatMap(List::stream).toList(), false);
    Instant resetStarted = Instant.now();
    syncPubSub.failFirstPublishOf("gcs:inbox/" + folder("publish-reset") + "/", Kind.RESET.after(PUBLISH_RPC_TIMEOUT));
    List<String> reset = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      String key = uploadOne(sync, "publish-reset", i);
      reset.add(key);
      Await.until(SETTLE, () -> syncPubSub.carriedOut(key) >= 2, "the publish of " + key + " made again after the reset");
    }
    settle(sync, syncPubSub, reset, false);
    cells.put(Kind.RESET, reset);

    for (Map.Entry<Kind, List<String>> cell : cells.entrySet()) {
      List<String> keys = cell.getValue();
      int faults = keys.stream().mapToInt(syncPubSub::failed).sum();
      MatrixTally tally = tally("Pub/Sub publish", cell.getKey(), faults,
          cell.getKey() == Kind.RESET ? resetStarted : started, measure(sync, syncPubSub, keys, false));
      assertEquals(DOCUMENTS, faults, "one failed publish per document");
      assertSyncOutcomes(tally);
      for (String key : keys) {
        assertEquals(2, syncPubSub.carriedOut(key), "the failed publish was made again: one copy of " + key);
        assertEquals(List.of("done"), outcomes(sync, key, "analyse"), "Gemini was not called again for " + key);
      }
    }
  }

  /** The notify POST recorded by the endpoint, then failed: sent again with the same Idempotency-Key; one recorded. */
  @Order(3)
  @ParameterizedTest(name = "notify, {0}")
  @EnumSource(Kind.class)
  void notify(Kind kind) {
    Instant started = Instant.now();
    long faultsBefore = sync.notify.counters().get("ambiguous");
    sync.notify.ambiguousNext(DOCUMENTS, kind.after(NOTIFY_TIMEOUT));
    List<String> keys = upload(sync, "notify-" + kind.label);
    settle(sync, syncPubSub, keys, false);
    int faults = (int) (sync.notify.counters().get("ambiguous") - faultsBefore);
    MatrixTally tally = tally("notify POST", kind, faults, started, measure(sync, syncPubSub, keys, false));

    assertEquals(DOCUMENTS, faults, "every injected failure was met");
    assertSyncOutcomes(tally);
    assertEquals(DOCUMENTS + faults, tally.sum(MatrixTally.Document::notifyRequests), "one request per failure more");
    for (String key : keys) {
      List<String> tries = outcomes(sync, key, "notify");
      assertEquals("done", tries.get(tries.size() - 1), key + ": " + tries);
      assertTrue(tries.subList(0, tries.size() - 1).stream().allMatch("failed"::equals), key + ": " + tries);
    }
  }

  /**
   * The commit that completes the analysis (the analysis, the bill and the publish claim in one) applied, its answer
   * lost: the redelivery finds the analysis done, so Gemini is never called again; the publish claim that commit made
   * is taken over once its lease runs out. The three ways run side by side (the fault point targets keys).
   */
  @Order(4)
  @Test
  void commitCompletingTheAnalysis() throws IOException {
    Instant started = Instant.now();
    long paidBefore = sync.gemini.count("generateContent.carriedOut");
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    for (Kind kind : Kind.values()) {
      cells.put(kind, upload(sync, commitFolder(kind).substring("matrix/".length())));
    }
    settle(sync, syncPubSub, cells.values().stream().flatMap(List::stream).toList(), false);
    assertEquals(3L * DOCUMENTS, sync.gemini.count("generateContent.carriedOut") - paidBefore, "one paid call each");
    for (Map.Entry<Kind, List<String>> cell : cells.entrySet()) {
      List<String> keys = cell.getValue();
      int faults = answersLost("complete:analyse", keys);
      MatrixTally tally = tally("Firestore commit completing analyse", cell.getKey(), faults, started,
          measure(sync, syncPubSub, keys, false));
      assertEquals(DOCUMENTS, faults, "one lost answer per document");
      assertSyncOutcomes(tally);
      for (String key : keys) {
        assertEquals(List.of("done"), outcomes(sync, key, "analyse"), "one try, one Gemini call for " + key);
        assertEquals(List.of("abandoned", "done"), outcomes(sync, key, "publish"),
            "the publish claim the commit made, taken over after its lease: " + key);
      }
    }
  }

  // --------------------------------------------------------------------------------------------- batch mode

  /**
   * batches.create carried out, then failed: the retried submission finds the job by its display name and adopts
   * it. One job per document, ever; one bill.
   */
  @Order(5)
  @ParameterizedTest(name = "batches.create, {0}")
  @EnumSource(Kind.class)
  void batchesCreate(Kind kind) {
    Instant started = Instant.now();
    long jobsBefore = batch.gemini.count("batchGenerateContent.carriedOut");
    long faultsBefore = batch.gemini.count("batchGenerateContent.ambiguous");
    batch.gemini.ambiguousNext("batchGenerateContent", DOCUMENTS, kind.after(GEMINI_TIMEOUT));
    List<String> keys = upload(batch, "batches.create-" + kind.label);
    Map<String, String> jobs = submittedJobs(keys);
    batch.gemini.ambiguousNext("batchGenerateContent", 0, AmbiguousFailure.RESET);
    finish(jobs.values());
    settle(batch, batchPubSub, keys, true);
    int faults = (int) (batch.gemini.count("batchGenerateContent.ambiguous") - faultsBefore);
    MatrixTally tally = tally("Gemini batches.create", kind, faults, started, measure(batch, batchPubSub, keys, true));

    assertEquals(DOCUMENTS, faults, "every injected failure was met");
    assertBatchOutcomes(tally);
    assertEquals(DOCUMENTS, batch.gemini.count("batchGenerateContent.carriedOut") - jobsBefore, "no second job");
    assertEquals(faults, keys.stream().mapToLong(key -> outcomes(batch, key, "analyse").stream()
        .filter("failed"::equals).count()).sum(), "every failure is a failed try on the ledger");
  }

  /** batches.get carried out, then failed: the completion is retried (webhook, reconciler) and lands once. */
  @Order(6)
  @ParameterizedTest(name = "batches.get, {0}")
  @EnumSource(Kind.class)
  void batchesGet(Kind kind) {
    Instant started = Instant.now();
    List<String> keys = upload(batch, "batches.get-" + kind.label);
    Map<String, String> jobs = submittedJobs(keys);
    long faultsBefore = batch.gemini.count("batches.get.ambiguous");
    batch.gemini.ambiguousNext("batches.get", DOCUMENTS, kind.after(GEMINI_TIMEOUT));
    finish(jobs.values());
    settle(batch, batchPubSub, keys, true);
    batch.gemini.ambiguousNext("batches.get", 0, AmbiguousFailure.RESET);
    int faults = (int) (batch.gemini.count("batches.get.ambiguous") - faultsBefore);
    MatrixTally tally = tally("Gemini batches.get", kind, faults, started, measure(batch, batchPubSub, keys, true));

    assertTrue(faults > 0, "the completions met the injected failures");
    assertBatchOutcomes(tally);
  }

  /**
   * The results download carried out, then failed. The pipeline submits inline requests, which Gemini answers inline
   * (GenerateContentBatchOutput: "inlined_responses … returned when the batch was built using inlined requests");
   * a job built from an input file is answered in a responses file, which the completion downloads. So these jobs are
   * made from files here, through the SDK, and their submissions recorded as DocumentUploaded records its own.
   */
  @Order(7)
  @ParameterizedTest(name = "files.download, {0}")
  @EnumSource(Kind.class)
  void resultsDownload(Kind kind) {
    Instant started = Instant.now();
    Map<String, String> jobs = fileJobs("files.download-" + kind.label);
    List<String> keys = List.copyOf(jobs.keySet());
    long faultsBefore = batch.gemini.count("files.download.ambiguous");
    batch.gemini.ambiguousNext("files.download", DOCUMENTS, kind.after(GEMINI_TIMEOUT));
    finish(jobs.values());
    settle(batch, batchPubSub, keys, true);
    batch.gemini.ambiguousNext("files.download", 0, AmbiguousFailure.RESET);
    int faults = (int) (batch.gemini.count("files.download.ambiguous") - faultsBefore);
    MatrixTally tally = tally("Gemini files.download", kind, faults, started, measure(batch, batchPubSub, keys, true));

    assertTrue(faults > 0, "the completions met the injected failures");
    assertBatchOutcomes(tally);
  }

  /**
   * The commit that completes a batch job (every document's analysis and bill, and the job's publish claim) applied,
   * its answer lost: the webhook's retries and the reconciler find it done, and publish once the claim it made runs
   * out. The three ways side by side, over 30 jobs.
   */
  @Order(8)
  @Test
  void commitCompletingABatchJob() throws IOException {
    Instant started = Instant.now();
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    Map<Kind, Map<String, String>> jobs = new LinkedHashMap<>();
    for (Kind kind : Kind.values()) {
      List<String> keys = upload(batch, "commit-complete-" + kind.label);
      cells.put(kind, keys);
      jobs.put(kind, submittedJobs(keys));
    }
    List<String> flags = answerLost("complete:complete", kind -> "gemini:batches/("
        + jobs.get(kind).values().stream().map(job -> job.substring("batches/".length())).collect(Collectors.joining("|"))
        + ")");
    batch.restart("GeminiWebhook", flags);
    batch.restart("GeminiReconciler", flags);
    jobs.values().forEach(cell -> finish(cell.values()));
    settle(batch, batchPubSub, cells.values().stream().flatMap(List::stream).toList(), true);

    for (Kind kind : Kind.values()) {
      List<String> keys = cells.get(kind);
      List<String> jobKeys = jobs.get(kind).values().stream().map(job -> "gemini:" + job).toList();
      int faults = answersLost("complete:complete", jobKeys);
      MatrixTally tally = tally("Firestore commit completing a batch job", kind, faults, started,
          measure(batch, batchPubSub, keys, true));
      assertEquals(DOCUMENTS, faults, "one lost answer per job");
      assertBatchOutcomes(tally);
      for (String jobKey : jobKeys) {
        assertEquals(List.of("done"), outcomes(batch, jobKey, "complete"), jobKey);
        assertEquals(List.of("abandoned", "done"), outcomes(batch, jobKey, "publish"),
            "the publish claim the commit made, taken over after its lease: " + jobKey);
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ helpers

  private static String folder(String cell) {
    return "matrix/" + cell;
  }

  private static String commitFolder(Kind kind) {
    return folder("commit-analyse-" + kind.label);
  }

  /** JVM flags making the commit completing {@code point}'s effect lose its answer, for the keys of each way. */
  private static List<String> answerLost(String point, java.util.function.Function<Kind, String> keys) {
    List<String> flags = new ArrayList<>(List.of("-Donce.fault.answer-lost=" + point, "-Donce.crash.log=" + faultLog));
    for (Kind kind : Kind.values()) {
      flags.add(kind.answerLostProperty() + "=" + keys.apply(kind));
    }
    return flags;
  }

  /** How many of {@code keys} had the commit completing {@code point}'s effect lose its answer. */
  private static int answersLost(String point, List<String> keys) throws IOException {
    List<String> lines = Files.readAllLines(faultLog, StandardCharsets.UTF_8);
    return (int) keys.stream().filter(key -> lines.contains("answer-lost " + point + " " + key)).count();
  }

  private static List<String> upload(PipelineStack stack, String cell) {
    return IntStream.range(0, DOCUMENTS).mapToObj(i -> uploadOne(stack, cell, i)).toList();
  }

  private static String uploadOne(PipelineStack stack, String cell, int i) {
    return key(stack.upload(String.format("%s/doc-%02d.pdf", folder(cell), i), InvoicePdf.of(cell + "-" + i),
        "application/pdf"));
  }

  /**
   * Waits until every document is notified and recorded so, every copy its publishes made is on the topic, and the
   * relay has finished every delivery; in batch mode calls the reconciler every few seconds, as Cloud Scheduler would.
   */
  private static void settle(PipelineStack stack, PubSubFaults pubsub, List<String> keys, boolean reconcile) {
    FirestoreLedger ledger = new FirestoreLedger(stack.db, LedgerConfig.defaults());
    Instant[] reconciled = {Instant.now()};
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      if (reconcile && Instant.now().isAfter(reconciled[0].plus(RECONCILE_EVERY))) {
        reconciled[0] = Instant.now();
        stack.reconcileIfUp();
      }
      return keys.stream().allMatch(key -> !stack.notifiedWith(key).isEmpty() && ledger.lookup(IdempotencyKey.of(key),
          "notify").map(r -> r.state() == RecordState.DONE).orElse(false));
    }), "every document of the cell notified");
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      List<PubsubMessage> published = stack.published();
      return keys.stream().allMatch(key -> attributed(published, key).size() >= pubsub.carriedOut(key));
    }), "every message published on the results topic");
    Await.until(SETTLE, stack::relayIdle, "every delivery finished");
  }

  /** {@code condition}, evaluated at most once per {@code period} (it reads Firestore); false in between. */
  private static BooleanSupplier atMostEvery(Duration period, BooleanSupplier condition) {
    long[] next = {0};
    return () -> {
      if (System.nanoTime() - next[0] < 0) {
        return false;
      }
      next[0] = System.nanoTime() + period.toNanos();
      return condition.getAsBoolean();
    };
  }

  /** The batch job each document's analysis names, once all are submitted. */
  private static Map<String, String> submittedJobs(List<String> keys) {
    Map<String, String> jobs = new LinkedHashMap<>();
    Await.until(SETTLE, atMostEvery(Duration.ofMillis(250), () -> {
      for (QueryDocumentSnapshot analysis : withKeys(batch.db, Records.ANALYSES, keys)) {
        if (analysis.getString("job") != null) {
          jobs.put(analysis.getString("key"), analysis.getString("job"));
        }
      }
      return jobs.size() == keys.size();
    }), "a batch job submitted for every document");
    return jobs;
  }

  private static void finish(java.util.Collection<String> jobs) {
    jobs.forEach(job -> batch.gemini.finish(job, BatchState.SUCCEEDED));
  }

  /**
   * One job per document made from an input file (the document's request as a JSONL line keyed by the document),
   * with the pipeline's display name, and its submission recorded as DocumentUploaded records one: the analysis
   * {@code submitted}, naming the job. Returns document key → job.
   */
  private static Map<String, String> fileJobs(String cell) {
    Records records = new Records(PriceTable.fromSettings(Settings.of(Map.of())));
    Map<String, String> jobs = new LinkedHashMap<>();
    WriteBatch submissions = batch.db.batch();
    for (int i = 0; i < DOCUMENTS; i++) {
      String name = String.format("%s/doc-%02d.pdf", folder(cell), i);
      IdempotencyKey key = IdempotencyKey.of("gcs:" + PipelineStack.BUCKET + "/" + name + "#1");
      byte[] pdf = InvoicePdf.of(cell + "-" + i);
      try {
        ObjectNode request = JSON.createObjectNode();
        request.putArray("contents").add(JSON.readTree(InvoicePrompt.content(pdf, "application/pdf").toJson()));
        ObjectNode generation = request.putObject("generationConfig");
        generation.put("responseMimeType", "application/json");
        generation.set("responseSchema",
            JSON.readTree(InvoicePrompt.config().build().responseSchema().orElseThrow().toJson()));
        byte[] line = JSON.writeValueAsBytes(Map.of("key", key.value(), "request", request));
        String input = gemini.files.upload(line, UploadFileConfig.builder().mimeType("application/jsonl").build())
            .name().orElseThrow();
        BatchJob job = gemini.batches.create("gemini-2.5-flash", BatchJobSource.builder().fileName(input).build(),
            CreateBatchJobConfig.builder().displayName(BatchJobs.displayName(key)).build());
        jobs.put(key.value(), job.name().orElseThrow());
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      DocumentSource source = new DocumentSource(PipelineStack.BUCKET, name, 1, "application/pdf", pdf.length, null, null);
      records.submitted(key, source, jobs.get(key.value())).addTo(creating(batch.db, submissions));
    }
    try {
      submissions.commit().get();
    } catch (Exception e) {
      throw new IllegalStateException("could not record the submissions", e);
    }
    return jobs;
  }

  /** Document creations added to {@code batch}, with the commit's time where the pipeline asks for it. */
  private static DocumentWrites creating(Firestore db, WriteBatch batch) {
    return new DocumentWrites() {
      @Override
      public void create(String collection, String id, Map<String, Object> fields) {
        Map<String, Object> resolved = new HashMap<>(fields);
        resolved.replaceAll((name, value) -> value == DocumentWrites.Special.SERVER_TIME ? FieldValue.serverTimestamp() : value);
        batch.create(db.collection(collection).document(id), resolved);
      }

      @Override
      public void set(String collection, String id, Map<String, Object> fields) {
        throw new UnsupportedOperationException("a submission only creates");
      }

      @Override
      public void merge(String collection, String id, Map<String, Object> fields) {
        throw new UnsupportedOperationException("a submission only creates");
      }
    };
  }

  private static List<QueryDocumentSnapshot> withKeys(Firestore db, String collection, List<String> keys) {
    try {
      return db.collection(collection).whereIn("key", List.copyOf(keys)).get().get().getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + collection, e);
    }
  }

  /** How each try of {@code effect} for {@code key} ended, oldest first. */
  private static List<String> outcomes(PipelineStack stack, String key, String effect) {
    LedgerRecord record = new FirestoreLedger(stack.db, LedgerConfig.defaults()).lookup(IdempotencyKey.of(key), effect)
        .orElseThrow(() -> new AssertionError("no " + effect + " record for " + key));
    return record.calls().stream().map(Call::outcome).toList();
  }

  /** What each document went through, from the ledger, the stand-ins, the topic and the notify endpoint. */
  private static List<MatrixTally.Document> measure(PipelineStack stack, PubSubFaults pubsub, List<String> keys,
      boolean batchMode) {
    Map<String, Long> analyses = countByKey(withKeys(stack.db, Records.ANALYSES, keys), "analysed");
    Map<String, Long> bills = countByKey(withKeys(stack.db, Records.BILLING, keys), null);
    Map<String, Long> jobs = batchMode ? jobsByDocument() : Map.of();
    List<PubsubMessage> published = stack.published();
    List<MatrixTally.Document> documents = new ArrayList<>();
    for (String key : keys) {
      int jobCount = jobs.getOrDefault(IdempotencyKey.of(key).documentId(), 0L).intValue();
      int paid = batchMode ? jobCount
          : (int) new FirestoreLedger(stack.db, LedgerConfig.defaults()).lookup(IdempotencyKey.of(key), "analyse")
              .orElseThrow().calls().stream().filter(Call::spent).count();
      documents.add(new MatrixTally.Document(key, paid, jobCount, bills.getOrDefault(key, 0L).intValue(),
          analyses.getOrDefault(key, 0L).intValue(), attributed(published, key).size(), stack.notifiedWith(key).size(),
          (int) outcomes(stack, key, "notify").stream().filter("done"::equals).count()));
    }
    return documents;
  }

  /** Documents per key; with {@code status}, only those of that status. */
  private static Map<String, Long> countByKey(List<QueryDocumentSnapshot> documents, String status) {
    return documents.stream().filter(d -> status == null || status.equals(d.getString("status")))
        .collect(Collectors.groupingBy(d -> d.getString("key"), Collectors.counting()));
  }

  /** The batch stand-in's jobs (every one it ever made), counted by the document their display name names. */
  private static Map<String, Long> jobsByDocument() {
    Map<String, Long> jobs = new HashMap<>();
    for (BatchJob job : gemini.batches.list(ListBatchJobsConfig.builder().pageSize(1000).build())) {
      BatchJobs.documentId(job).ifPresent(id -> jobs.merge(id, 1L, Long::sum));
    }
    return jobs;
  }

  private static MatrixTally tally(String call, Kind kind, int faults, Instant started,
      List<MatrixTally.Document> documents) {
    MatrixTally tally = new MatrixTally(call, kind.label, faults, documents, Duration.between(started, Instant.now()));
    TABLE.add(tally);
    System.out.println(MatrixTally.HEADER + "\n" + tally.row());
    return tally;
  }

  /** Sync mode: no batch job; the rest as {@link #assertOutcomes}. */
  private static void assertSyncOutcomes(MatrixTally tally) {
    assertOutcomes(tally, sync, syncPubSub);
    for (MatrixTally.Document document : tally.documents()) {
      assertEquals(0, document.jobs(), "no batch job in sync mode");
    }
  }

  /** Batch mode: one job per document, ever; the rest as {@link #assertOutcomes}. */
  private static void assertBatchOutcomes(MatrixTally tally) {
    assertOutcomes(tally, batch, batchPubSub);
    for (MatrixTally.Document document : tally.documents()) {
      assertEquals(1, document.jobs(), "one batch job for " + document.key());
    }
  }

  /**
   * Every document analysed and billed once; published once plus one copy per publish that failed after it was made
   * (every copy the same message under the document's key); notified once, with one request per recorded try.
   */
  private static void assertOutcomes(MatrixTally tally, PipelineStack stack, PubSubFaults pubsub) {
    assertEquals(DOCUMENTS, tally.documents().size());
    List<PubsubMessage> published = stack.published();
    for (MatrixTally.Document document : tally.documents()) {
      String key = document.key();
      assertEquals(1, document.analyses(), "one analysis of " + key + ", analysed");
      assertEquals(1, document.bills(), "one bill for " + key);
      assertEquals(1 + pubsub.failed(key), document.publications(),
          "one message for " + key + ", and a copy per publish that failed after it was made");
      assertEquals(pubsub.carriedOut(key), document.publications(), "every publish carried out is on the topic");
      List<PubsubMessage> copies = attributed(published, key);
      assertTrue(copies.stream().allMatch(c -> c.getData().equals(copies.get(0).getData())), "the same message: " + key);
      assertEquals(1, document.notified(), "one notification recorded for " + key);
      assertEquals(outcomes(stack, key, "notify").size(), document.notifyRequests(),
          "one request to the endpoint per recorded try of " + key);
    }
  }
}
