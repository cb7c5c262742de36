package dev.once.functions.it;

import static dev.once.functions.it.MatrixStack.DOCUMENTS;
import static dev.once.functions.it.MatrixStack.JOBS;
import static dev.once.functions.it.MatrixStack.JOB_DOCUMENTS;
import static dev.once.functions.it.MatrixStack.folder;
import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.pipeline.DocumentStatus.GATHERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.pubsub.v1.PubsubMessage;
import dev.once.ledger.Call;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.RetryPolicy;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordWrites;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
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
 * Firestore commit that completes a claim (applied, its answer lost on the wire: {@link FirestoreFaults}). Five documents per cell, every function under the
 * real invoker; each cell counts, per document, the Gemini calls that may have been billed, the batch jobs, bills,
 * analyses, messages on the results topic (copies included) and notifications, asserts them exactly, and prints its
 * row of the table BENCHMARKS.md keeps (also written to {@code target/it-logs/ambiguous-failure-matrix.md}). The short
 * bounds that make late answers quick (Gemini 3 s, notify 2 s) can also fire on an answer the other side gave as usual
 * when the machine is loaded: such a try is on the ledger as one that timed out, and the counts include it (one paid
 * call, one request, one copy more per such try) instead of hoping it never happens.
 *
 * <p>Two stacks, one per analysis mode. A cell whose failures are armed on a stand-in (its next N calls of one
 * operation) runs alone on its stack, over documents of its own; cells whose failures target keys (the publish, the
 * commit) run side by side. The batch stack's cells run on a thread of their own, beside the sync stack's, and its
 * files.download cells (which upload nothing) on another beside it; each batch test reports its cell's verdict.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AmbiguousFailureMatrixIT {
  /** ONCE_MAX_ATTEMPTS, left at its default. */
  private static final int MAX_TRIES = 5;
  private static final int LEASE_SECONDS = 4;
  private static final Duration GEMINI_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration NOTIFY_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration CELL_DEADLINE = Bounds.PATIENT;
  private static final List<String> CALLS = List.of("generateContent", "Pub/Sub publish", "notify POST",
      "Firestore commit completing analyse", "Firestore commit adding a document to a job", "Gemini batches.create",
      "Gemini batches.get", "Gemini files.download", "Firestore commit completing a batch job");
  private static final List<MatrixTally> TABLE = Collections.synchronizedList(new ArrayList<>());
  private static final Map<String, CompletableFuture<Void>> BATCH_CELLS = new LinkedHashMap<>();

  private static MatrixStack sync;
  /** Between the sync stack's DocumentUploaded and Firestore. */
  private static FirestoreFaults firestore;
  /** Between every function of the batch stack and Firestore. */
  private static FirestoreFaults batchFirestore;
  private static MatrixStack batch;
  private static ExecutorService batchThread;
  /**
   * The files.download cells', beside the batch thread: they upload nothing (no document of theirs joins another
   * cell's gathering), make their jobs before any cell runs (the cells beside them count the jobs Gemini makes), and
   * arm the only faults on files.download, which no inline job's completion calls.
   */
  private static ExecutorService fileJobThread;

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

    /**
     * The failure of a Firestore commit: a late answer as the client reports it when its deadline passes,
     * {@code DEADLINE_EXCEEDED} (504 in Google's error model), at once instead of after the ledger's 30 s bound on a
     * call (either way the ledger sees a call that may have been applied); a reset; INTERNAL.
     */
    AmbiguousFailure onFirestore() {
      return this == LATE ? AmbiguousFailure.serverError(504) : after(Duration.ZERO);
    }
  }

  @BeforeAll
  static void start() {
    // Short bounds, so late answers come within seconds; a short lease, so a claim left behind by a lost answer is
    // taken over seconds later; a patient relay, as Eventarc is.
    PipelineStack.Config config = new PipelineStack.Config("sync", LEASE_SECONDS,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
            .withMaxAge(Duration.ofMinutes(5)),
        Map.of("GEMINI_TIMEOUT_SECONDS", String.valueOf(GEMINI_TIMEOUT.toSeconds()),
            "NOTIFY_TIMEOUT_SECONDS", String.valueOf(NOTIFY_TIMEOUT.toSeconds())));
    // Every function of the batch stack reaches Firestore through a proxy, which loses the answers of the commits its
    // cells pick (adding a document to a job, completing a job) and passes the rest.
    batchFirestore = new FirestoreFaults(FirestoreEmulator.shared().hostPort());
    CompletableFuture<MatrixStack> batchStarting = CompletableFuture.supplyAsync(() -> warm(MatrixStack.start(
        MatrixStack.gathering(config).withEnv("FIRESTORE_EMULATOR_HOST", batchFirestore.hostPort())), true),
        PipelineStack.BACKGROUND);
    // The sync stack's DocumentUploaded (from its start: no restart) reaches Firestore through a proxy, which loses the
    // answers of the commit cells' completing commits on the wire (see commitCompletingTheAnalysis).
    firestore = new FirestoreFaults(FirestoreEmulator.shared().hostPort());
    sync = warm(MatrixStack.start(config.withEnv("DocumentUploaded", "FIRESTORE_EMULATOR_HOST", firestore.hostPort())),
        false);
    batch = batchStarting.join();
    batchThread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("batch-cells").factory());
    fileJobThread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("file-job-cells").factory());
    for (Kind kind : Kind.values()) {
      Map<String, String> fileJobs = FileBatchJobs.submit(batch, "files.download-" + kind.label, JOB_DOCUMENTS);
      inBackground("files.download " + kind, () -> resultsDownloadCell(kind, fileJobs), fileJobThread);
    }
    CompletableFuture<?> fileJobCells = CompletableFuture.allOf(Arrays.stream(Kind.values())
        .map(kind -> BATCH_CELLS.get("files.download " + kind)).toArray(CompletableFuture[]::new));
    for (Kind kind : Kind.values()) {
      inBackground("assign " + kind, () -> commitAddingADocumentToAJobCell(kind));
    }
    for (Kind kind : Kind.values()) {
      inBackground("batches.create " + kind, () -> batchesCreateCell(kind));
    }
    for (Kind kind : Kind.values()) {
      // The file jobs' completions call batches.get too: these cells' faults are for their own jobs only.
      inBackground("batches.get " + kind, () -> {
        fileJobCells.exceptionally(failed -> null).join();
        batchesGetCell(kind);
      });
    }
    inBackground("commit complete", AmbiguousFailureMatrixIT::commitCompletingABatchJobCells);
  }

  /**
   * One document (batch mode: a job's worth) through the stack before the matrix: a new instance's first event builds
   * its clients, which the matrix does not measure (and a cold instance's first call could outlast the short timeouts
   * here).
   */
  private static MatrixStack warm(MatrixStack matrix, boolean batchMode) {
    List<String> keys = matrix.uploadFirst("warm-up", batchMode ? JOB_DOCUMENTS : 1);
    if (batchMode) {
      matrix.finish(matrix.submittedJobs(keys).values());
    }
    matrix.settle(keys, batchMode);
    return matrix;
  }

  @AfterAll
  static void stop() throws IOException {
    if (batchThread != null) {
      batchThread.shutdownNow();
      fileJobThread.shutdownNow();
    }
    List<String> rows = new ArrayList<>(List.of(MatrixTally.HEADER));
    TABLE.stream().sorted(Comparator.comparing((MatrixTally t) -> CALLS.indexOf(t.call())))
        .map(MatrixTally::row).forEach(rows::add);
    Path table = Path.of(System.getProperty("once.logDir", "target/it-logs"), "ambiguous-failure-matrix.md");
    Files.createDirectories(table.getParent());
    Files.write(table, rows, StandardCharsets.UTF_8);
    System.out.println("ambiguous-failure matrix, per document (" + table + "):\n" + String.join("\n", rows));
    for (FirestoreFaults proxy : new FirestoreFaults[] {firestore, batchFirestore}) {
      if (proxy != null) {
        proxy.close();
      }
    }
    for (MatrixStack matrix : new MatrixStack[] {sync, batch}) {
      if (matrix != null) {
        matrix.close();
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
    long paidBefore = sync.stack.gemini.count("generateContent.carriedOut");
    Faulted<List<String>> run = geminiFailing(sync, "generateContent", DOCUMENTS, kind.after(GEMINI_TIMEOUT), () -> {
      List<String> uploaded = sync.upload("generateContent-" + kind.label);
      sync.settle(uploaded, false);
      return uploaded;
    });
    List<String> keys = run.value();
    int faults = run.faults();
    MatrixTally tally = tally("generateContent", kind.label, faults, started, sync.measure(keys, false));

    assertEquals(DOCUMENTS, faults, "every injected failure was met");
    assertSyncOutcomes(tally);
    assertEquals(sync.stack.gemini.count("generateContent.carriedOut") - paidBefore,
        tally.sum(MatrixTally.Document::paid), "every paid call is a try the ledger recorded before it was made");
    int timedOut = assertFailedThenDone(sync, keys, "analyse", faults);
    assertEquals(DOCUMENTS + faults + timedOut, tally.sum(MatrixTally.Document::paid),
        "one call per document, one per failure, one per call that timed out on its own (" + timedOut + ")");
  }

  /**
   * generateContent carried out, then failing on every call: given up after ONCE_MAX_ATTEMPTS (5) calls that may
   * have been billed — the analysis failed with the reason, nothing billed by the pipeline, published and notified as
   * such — instead of a day of paid retries.
   */
  @Order(2)
  @Test
  void generateContentFailingEveryTime_isGivenUpAtTheCap() {
    Instant started = Instant.now();
    long paidBefore = sync.stack.gemini.count("generateContent.carriedOut");
    Faulted<List<String>> run = geminiFailing(sync, "generateContent", Integer.MAX_VALUE,
        AmbiguousFailure.serverError(500), () -> {
          List<String> uploaded = sync.upload("generateContent-500-always");
          sync.settle(uploaded, false);
          return uploaded;
        });
    List<String> keys = run.value();
    int faults = run.faults();
    MatrixTally tally = tally("generateContent", "500 on every call", faults, started, sync.measure(keys, false));

    assertEquals(MAX_TRIES * DOCUMENTS, faults, "five calls per document, each failed");
    assertEquals(faults, sync.stack.gemini.count("generateContent.carriedOut") - paidBefore, "no call past the cap");
    assertOutcomes(tally, sync, "failed", 0);
    for (String key : keys) {
      assertEquals(Collections.nCopies(MAX_TRIES, "failed"), sync.outcomes(key, "analyse"), key);
      String reason = sync.withKeys(RecordWrites.ANALYSES, List.of(key)).get(0).getString("reason");
      assertTrue(reason.startsWith("gave up after 5 tries that may have run"), reason);
    }
  }

  /**
   * The publish carried out, then failed: it is made again (by the publisher's client, or by the redelivery when its
   * bound ran out), so a copy lands on the topic under the same {@code idempotency_key}, which MessageDelivered drops:
   * one notification. Late answers and INTERNAL fail one call
   * each and run side by side; a reset fails every call in flight on the connection, so its documents go one at a
   * time.
   */
  @Order(3)
  @Test
  void publish() {
    Instant started = Instant.now();
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    for (Kind kind : List.of(Kind.LATE, Kind.SERVER_ERROR)) {
      sync.pubsub.failFirstPublishOf("gcs:inbox/" + folder("publish-" + kind.label) + "/",
          kind.after(MessagePublisher.TIMEOUT));
      cells.put(kind, sync.upload("publish-" + kind.label));
    }
    sync.settle(cells.values().stream().flatMap(List::stream).toList(), false);
    Instant resetStarted = Instant.now();
    sync.pubsub.failFirstPublishOf("gcs:inbox/" + folder("publish-reset") + "/",
        Kind.RESET.after(MessagePublisher.TIMEOUT));
    List<String> reset = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      String key = sync.upload("publish-reset", i);
      reset.add(key);
      Await.until(CELL_DEADLINE, () -> sync.pubsub.carriedOut(key) >= 2, "the publish of " + key + " made again");
    }
    sync.settle(reset, false);
    cells.put(Kind.RESET, reset);

    for (Map.Entry<Kind, List<String>> cell : cells.entrySet()) {
      List<String> keys = cell.getValue();
      int faults = keys.stream().mapToInt(sync.pubsub::failed).sum();
      MatrixTally tally = tally("Pub/Sub publish", cell.getKey().label, faults,
          cell.getKey() == Kind.RESET ? resetStarted : started, sync.measure(keys, false));
      assertEquals(DOCUMENTS, faults, "one failed publish per document");
      assertSyncOutcomes(tally);
      // The publisher's client sends again within its own bound; a late answer outlasts that bound, so the try
      // fails (recorded) and the redelivery publishes again.
      int injectedTries = cell.getKey() == Kind.LATE ? 1 : 0;
      assertFailedThenDone(sync, keys, "publish", injectedTries * DOCUMENTS);
      for (String key : keys) {
        // A publish that timed out on its own (Pub/Sub slower than the publisher's bound) is a copy more.
        int timedOut = (int) sync.calls(key, "publish").stream().filter(MatrixStack::timedOut).count() - injectedTries;
        assertEquals(2 + timedOut, sync.pubsub.carriedOut(key),
            "the failed publish was made again: one copy of " + key);
        assertDoneOnce(sync, key, "analyse", "Gemini was not called again for " + key);
      }
    }
  }

  /** The notify POST recorded by the endpoint, then failed: sent again with the same Idempotency-Key; one recorded. */
  @Order(4)
  @ParameterizedTest(name = "notify, {0}")
  @EnumSource(Kind.class)
  void notify(Kind kind) {
    Instant started = Instant.now();
    long faultsBefore = sync.stack.notify.counters().get("ambiguous");
    sync.stack.notify.ambiguousNext(DOCUMENTS, kind.after(NOTIFY_TIMEOUT)); // each taken by the next request
    List<String> keys = sync.upload("notify-" + kind.label);
    sync.settle(keys, false);
    int faults = (int) (sync.stack.notify.counters().get("ambiguous") - faultsBefore);
    MatrixTally tally = tally("notify POST", kind.label, faults, started, sync.measure(keys, false));

    assertEquals(DOCUMENTS, faults, "every injected failure was met");
    assertSyncOutcomes(tally);
    int timedOut = assertFailedThenDone(sync, keys, "notify", faults);
    assertEquals(DOCUMENTS + faults + timedOut, tally.sum(MatrixTally.Document::notifyRequests),
        "one request more per failure, and per request that timed out on its own (" + timedOut + ")");
  }

  /**
   * The commit that completes the analysis (the analysis, the bill and the publish claim in one) applied, its answer
   * lost on the wire by the proxy in front of Firestore, so Gemini is never called again and the same delivery
   * publishes at once: reset, the real client resends the commit; late and 500, the ledger checks its token in a
   * transaction. Either way the ledger recognises its own completion by its nonce and hands over the publish claim
   * it made. The three ways run side by side.
   */
  @Order(5)
  @Test
  void commitCompletingTheAnalysis() {
    Instant started = Instant.now();
    long paidBefore = sync.stack.gemini.count("generateContent.carriedOut");
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    for (Kind kind : Kind.values()) {
      for (int i = 0; i < DOCUMENTS; i++) {
        // The commit completing this document's analysis: its analysis and bill carry its key, its record turns DONE.
        firestore.failOnceCommitHolding(kind.onFirestore(),
            String.format("%s/doc-%02d.pdf#", folder(commitCell(kind)), i), "DONE");
      }
    }
    for (Kind kind : Kind.values()) {
      cells.put(kind, sync.upload(commitCell(kind)));
    }
    sync.settle(cells.values().stream().flatMap(List::stream).toList(), false);
    firestore.stop();
    List<String> all = cells.values().stream().flatMap(List::stream).toList();
    int timedOut = assertFailedThenDone(sync, all, "analyse", 0);
    assertEquals(3L * DOCUMENTS + timedOut, sync.stack.gemini.count("generateContent.carriedOut") - paidBefore,
        "one paid call per document, and per call that timed out on its own (" + timedOut + ")");
    for (Map.Entry<Kind, List<String>> cell : cells.entrySet()) {
      List<String> keys = cell.getValue();
      int faults = firestore.failed(cell.getKey().onFirestore());
      MatrixTally tally = tally("Firestore commit completing analyse", cell.getKey().label, faults, started,
          sync.measure(keys, false));
      assertEquals(DOCUMENTS, faults, "one lost answer per document");
      assertSyncOutcomes(tally);
      for (String key : keys) {
        assertDoneOnce(sync, key, "analyse", "one try done, one Gemini call for " + key);
        assertDoneOnce(sync, key, "publish", "the publish claim the commit made, handed over to the same delivery: "
            + key);
      }
    }
  }

  // --------------------------------------------------------------------------------------------- batch mode

  @Order(6)
  @ParameterizedTest(name = "adding a document to a job, {0}")
  @EnumSource(Kind.class)
  void commitAddingADocumentToAJob(Kind kind) throws Throwable {
    verdict("assign " + kind);
  }

  @Order(6)
  @ParameterizedTest(name = "batches.create, {0}")
  @EnumSource(Kind.class)
  void batchesCreate(Kind kind) throws Throwable {
    verdict("batches.create " + kind);
  }

  @Order(7)
  @ParameterizedTest(name = "batches.get, {0}")
  @EnumSource(Kind.class)
  void batchesGet(Kind kind) throws Throwable {
    verdict("batches.get " + kind);
  }

  @Order(8)
  @ParameterizedTest(name = "files.download, {0}")
  @EnumSource(Kind.class)
  void resultsDownload(Kind kind) throws Throwable {
    verdict("files.download " + kind);
  }

  @Order(9)
  @Test
  void commitCompletingABatchJob() throws Throwable {
    verdict("commit complete");
  }

  /**
   * The write that adds a document to a gathering (conditional on the update time its queued analysis was read at)
   * applied, its answer lost: the submitter reads the document back, finds it in its gathering, and submits the job
   * with it. A reset's resent write fails its precondition and is read back the same way. Every document's write
   * fails so, once; the jobs are made as if nothing had happened.
   */
  private static void commitAddingADocumentToAJobCell(Kind kind) {
    Instant started = Instant.now();
    long jobsBefore = batch.stack.gemini.count("batchGenerateContent.carriedOut");
    int faultsBefore = batchFirestore.failed(kind.onFirestore());
    for (int i = 0; i < DOCUMENTS; i++) {
      // Only an assignment writes this status (the cells run one at a time on this stack, so these are the cell's).
      batchFirestore.failOnceCommitHolding(kind.onFirestore(), GATHERED.value());
    }
    List<String> keys = batch.upload("assign-" + kind.label);
    Map<String, String> jobs = batch.submittedJobs(keys);
    batchFirestore.stop();
    int faults = batchFirestore.failed(kind.onFirestore()) - faultsBefore;
    finishAndSettle(jobs, keys);
    MatrixTally tally = tally("Firestore commit adding a document to a job", kind.label, faults, started,
        batch.measure(keys, true));

    assertEquals(DOCUMENTS, faults, "one lost answer per document");
    assertBatchOutcomes(tally);
    assertEquals(JOBS, batch.stack.gemini.count("batchGenerateContent.carriedOut") - jobsBefore,
        "one job per gathering");
    assertFailedThenDone(batch, batch.submissionsOf(keys), "submit", 0);
  }

  /**
   * batches.create carried out, then failed: the upload acknowledges its event with its document gathered, and the
   * reconciler resumes the gathering's submission, which finds the job by its display name and adopts it. One job
   * per gathering of five documents, ever; one bill per document.
   */
  private static void batchesCreateCell(Kind kind) {
    Instant started = Instant.now();
    long jobsBefore = batch.stack.gemini.count("batchGenerateContent.carriedOut");
    Faulted<List<String>> run = geminiFailing(batch, "batchGenerateContent", JOBS, kind.after(GEMINI_TIMEOUT),
        () -> {
          List<String> uploaded = batch.upload("batches.create-" + kind.label);
          batch.finish(batch.submittedJobs(uploaded).values());
          return uploaded;
        });
    List<String> keys = run.value();
    batch.settle(keys, true);
    int faults = run.faults();
    MatrixTally tally = tally("Gemini batches.create", kind.label, faults, started, batch.measure(keys, true));

    assertEquals(JOBS, faults, "every injected failure was met");
    assertBatchOutcomes(tally);
    assertEquals(JOBS, batch.stack.gemini.count("batchGenerateContent.carriedOut") - jobsBefore, "no second job");
    assertFailedThenDone(batch, batch.submissionsOf(keys), "submit", faults);
  }

  /** batches.get carried out, then failed: the completion is retried (the hand-off redelivered to BatchCompleted, the reconciler) and lands once. */
  private static void batchesGetCell(Kind kind) {
    Instant started = Instant.now();
    List<String> keys = batch.upload("batches.get-" + kind.label);
    Map<String, String> jobs = batch.submittedJobs(keys);
    int faults = geminiFailing(batch, "batches.get", JOBS, kind.after(GEMINI_TIMEOUT),
        () -> finishAndSettle(jobs, keys)).faults();
    MatrixTally tally = tally("Gemini batches.get", kind.label, faults, started, batch.measure(keys, true));

    assertTrue(faults > 0, "the completions met the injected failures");
    assertBatchOutcomes(tally);
  }

  /** The responses file's download carried out, then failed: the completion is retried and lands once. */
  private static void resultsDownloadCell(Kind kind, Map<String, String> jobs) {
    Instant started = Instant.now();
    List<String> keys = List.copyOf(jobs.keySet());
    int faults = geminiFailing(batch, "files.download", JOBS, kind.after(GEMINI_TIMEOUT),
        () -> finishAndSettle(jobs, keys)).faults();
    MatrixTally tally = tally("Gemini files.download", kind.label, faults, started, batch.measure(keys, true));

    assertTrue(faults > 0, "the completions met the injected failures");
    assertBatchOutcomes(tally);
  }

  /**
   * The commit that completes a batch job's documents (its chunk's: every document's analysis and bill, and the
   * chunk's publish claim) applied, its answer lost on the wire, so the same delivery publishes at once: the ledger
   * recognises its own completion and hands over the publish claim. Over 3 jobs of 5 documents: late and 500 side by
   * side, then the reset's one at a time.
   */
  private static void commitCompletingABatchJobCells() {
    Instant started = Instant.now();
    Map<Kind, List<String>> cells = new LinkedHashMap<>();
    Map<Kind, Map<String, String>> jobs = new LinkedHashMap<>();
    Map<Kind, Integer> faultsBefore = new LinkedHashMap<>();
    for (Kind kind : Kind.values()) {
      // One cell's documents at a time, so each gathering holds one cell's.
      cells.put(kind, batch.upload("commit-complete-" + kind.label));
      jobs.put(kind, batch.submittedJobs(cells.get(kind)));
      faultsBefore.put(kind, batchFirestore.failed(kind.onFirestore()));
    }
    // The commit completing a job's documents (its only chunk, of five): the chunk's record turns DONE and the
    // publish claim it makes carries the chunk's key.
    jobs.forEach((kind, cell) -> cell.values().stream().distinct().forEach(job -> batchFirestore
        .failOnceCommitHolding(kind.onFirestore(), chunkKey("gemini:" + job), "DONE")));
    // A reset fails every call in flight on the connection (another job's, completed beside it, would fail a try):
    // late and 500 side by side, the reset's jobs one at a time after them.
    List<Kind> sideBySide = List.of(Kind.LATE, Kind.SERVER_ERROR);
    sideBySide.forEach(kind -> batch.finish(jobs.get(kind).values()));
    batch.settle(sideBySide.stream().flatMap(kind -> cells.get(kind).stream()).toList(), true);
    for (String job : jobs.get(Kind.RESET).values().stream().distinct().toList()) {
      batch.finish(List.of(job));
      batch.settle(cells.get(Kind.RESET).stream().filter(key -> job.equals(jobs.get(Kind.RESET).get(key))).toList(),
          true);
    }
    batchFirestore.stop();

    for (Kind kind : Kind.values()) {
      List<String> jobKeys = jobs.get(kind).values().stream().distinct().map(job -> "gemini:" + job).toList();
      int faults = batchFirestore.failed(kind.onFirestore()) - faultsBefore.get(kind);
      MatrixTally tally = tally("Firestore commit completing a batch job", kind.label, faults, started,
          batch.measure(cells.get(kind), true));
      assertEquals(JOBS, jobKeys.size(), "jobs of " + JOB_DOCUMENTS + " documents");
      assertEquals(JOBS, faults, "one lost answer per job");
      assertBatchOutcomes(tally);
      for (String jobKey : jobKeys) {
        assertDoneOnce(batch, jobKey, "complete", jobKey);
        assertDoneOnce(batch, chunkKey(jobKey), "complete", chunkKey(jobKey));
        assertDoneOnce(batch, chunkKey(jobKey), "publish",
            "the publish claim the commit made, handed over to the same delivery: " + chunkKey(jobKey));
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ helpers

  /** The ledger key of a job's first chunk of documents (CompletionFlow: its only one, for a job of five). */
  private static String chunkKey(String jobKey) {
    return jobKey + "#chunk-0";
  }

  /** What a step answered, and how many injected failures it met. */
  private record Faulted<T>(T value, int faults) {}

  /**
   * Runs {@code step} while the stack's Gemini stand-in carries out its next {@code calls} calls of {@code operation}
   * and then fails them {@code failure}'s way; the failures are switched off again however the step ends.
   */
  private static <T> Faulted<T> geminiFailing(MatrixStack stack, String operation, int calls, AmbiguousFailure failure,
      Supplier<T> step) {
    long before = stack.stack.gemini.count(operation + ".ambiguous");
    stack.stack.gemini.ambiguousNext(operation, calls, failure);
    T value;
    try {
      value = step.get();
    } finally {
      stack.stack.gemini.ambiguousNext(operation, 0, AmbiguousFailure.RESET);
    }
    return new Faulted<>(value, (int) (stack.stack.gemini.count(operation + ".ambiguous") - before));
  }

  /** The jobs finished by the stand-in, and their documents settled (the batch cells' step). */
  private static List<String> finishAndSettle(Map<String, String> jobs, List<String> keys) {
    batch.finish(jobs.values());
    batch.settle(keys, true);
    return keys;
  }

  /** Runs a batch cell on the batch thread, after the ones queued before it. */
  private static void inBackground(String cell, Runnable body) {
    inBackground(cell, body, batchThread);
  }

  private static void inBackground(String cell, Runnable body, ExecutorService thread) {
    BATCH_CELLS.put(cell, CompletableFuture.runAsync(body, thread));
  }

  /** The verdict of a batch cell: its failure, if it failed. */
  private static void verdict(String cell) throws Throwable {
    try {
      BATCH_CELLS.get(cell).get(10, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      throw e.getCause();
    }
  }

  private static String commitCell(Kind kind) {
    return "commit-analyse-" + kind.label;
  }

  private static MatrixTally tally(String call, String failure, int faults, Instant started,
      List<MatrixTally.Document> documents) {
    MatrixTally tally = new MatrixTally(call, failure, faults, documents, Duration.between(started, Instant.now()));
    TABLE.add(tally);
    System.out.println(MatrixTally.HEADER + "\n" + tally.row());
    return tally;
  }

  /**
   * Each document's tries of {@code effect}: failed ones, then done. Every failure met ({@code faults} in all) is a
   * failed try; any failed try beyond them must be one that timed out (an answer the other side gave as usual, after
   * the caller's short deadline on a loaded machine), and there must be at least that many tries that timed out: a try
   * that failed any other way, or went unrecorded, fails the cell. Returns how many failed beyond the faults.
   */
  private static int assertFailedThenDone(MatrixStack matrix, List<String> keys, String effect, int faults) {
    int failed = 0;
    int timedOut = 0;
    List<String> all = new ArrayList<>();
    for (String key : keys) {
      List<Call> calls = matrix.calls(key, effect);
      List<String> tries = calls.stream().map(call -> call.outcome().stored()).toList();
      assertEquals("done", tries.get(tries.size() - 1), key + ": " + tries);
      assertTrue(tries.subList(0, tries.size() - 1).stream().allMatch("failed"::equals),
          "each failed call is recorded as a try that may have run: " + key + ": " + tries);
      failed += tries.size() - 1;
      timedOut += (int) calls.stream().filter(MatrixStack::timedOut).count();
      all.add(key + " " + calls);
    }
    int beyond = failed - faults;
    assertTrue(beyond >= 0, "every failure met is a failed try on the ledger: " + failed + " of " + faults);
    assertTrue(timedOut >= beyond, failed + " failed tries of " + effect + " for " + faults + " failures met: the "
        + beyond + " beyond them must have timed out (" + timedOut + " did): " + all);
    if (beyond > 0) {
      System.out.println(beyond + " " + effect + " tries timed out beyond the " + faults + " failures met: " + all);
    }
    return beyond;
  }

  /** One try of {@code effect} done, and before it none but tries that timed out on a loaded machine. */
  private static void assertDoneOnce(MatrixStack matrix, String key, String effect, String what) {
    List<Call> calls = matrix.calls(key, effect);
    assertEquals("done", calls.get(calls.size() - 1).outcome().stored(), what + ": " + calls);
    assertTrue(calls.subList(0, calls.size() - 1).stream().allMatch(MatrixStack::timedOut), what + ": " + calls);
  }

  /** Sync mode: no batch job; analysed and billed once; the rest as {@link #assertOutcomes}. */
  private static void assertSyncOutcomes(MatrixTally tally) {
    assertOutcomes(tally, sync, "analysed", 1);
    for (MatrixTally.Document document : tally.documents()) {
      assertEquals(0, document.jobs(), "no batch job in sync mode: " + document.key());
    }
  }

  /**
   * Batch mode: one job per document, ever, each job holding {@link MatrixStack#JOB_DOCUMENTS} of the cell's documents;
   * analysed and billed once; the rest as {@link #assertOutcomes}.
   */
  private static void assertBatchOutcomes(MatrixTally tally) {
    assertOutcomes(tally, batch, "analysed", 1);
    for (MatrixTally.Document document : tally.documents()) {
      assertEquals(1, document.jobs(), "one batch job for " + document.key());
    }
    Map<String, Long> perJob = batch.withKeys(RecordWrites.ANALYSES, tally.documents().stream()
        .map(MatrixTally.Document::key).toList()).stream()
        .collect(Collectors.groupingBy(a -> a.getString("job"), Collectors.counting()));
    assertEquals(Collections.nCopies(JOBS, (long) JOB_DOCUMENTS), List.copyOf(perJob.values()),
        "the cell's documents in " + JOBS + " jobs of " + JOB_DOCUMENTS + ": " + perJob);
  }

  /**
   * Every document has one analysis, of {@code status}, and {@code bills} bills; is published once plus one copy per
   * publish that failed after it was made (every copy the same message under the document's key); is notified once,
   * with one request to the endpoint per recorded try.
   */
  private static void assertOutcomes(MatrixTally tally, MatrixStack matrix, String status, int bills) {
    assertEquals(DOCUMENTS, tally.documents().size());
    List<PubsubMessage> published = matrix.stack.published();
    for (MatrixTally.Document document : tally.documents()) {
      String key = document.key();
      assertEquals(1, document.analyses(), "one analysis of " + key);
      assertEquals(status, document.status(), "the analysis of " + key);
      assertEquals(bills, document.bills(), "bills for " + key);
      // A publish that timed out on its own (Pub/Sub slower than the publisher's bound) may be a copy more.
      long publishTimedOut = matrix.publishTimedOut(key);
      assertTrue(document.publications() >= 1 + matrix.pubsub.failed(key)
          && document.publications() <= 1 + matrix.pubsub.failed(key) + publishTimedOut,
          "one message for " + key + ", and a copy per publish that failed after it was made: "
              + document.publications() + " for " + matrix.pubsub.failed(key) + " failed (" + publishTimedOut
              + " publish tries timed out)");
      assertEquals(matrix.pubsub.carriedOut(key), document.publications(), "every publish carried out is on the topic");
      List<PubsubMessage> copies = attributed(published, key);
      assertTrue(copies.stream().allMatch(copy -> copy.getData().equals(copies.get(0).getData())),
          "every copy the same message: " + key);
      assertEquals(1, document.notified(), "one notification recorded for " + key);
      assertEquals(matrix.outcomes(key, "notify").size(), document.notifyRequests(),
          "one request to the endpoint per recorded try of " + key);
    }
  }
}
