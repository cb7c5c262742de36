package dev.once.cli;

import static dev.once.pipeline.DocumentStatus.QUEUED;
import static dev.once.pipeline.DocumentStatus.SUBMITTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.api.core.ApiFuture;
import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.samples.InvoicePdf;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.pipeline.BatchGauges;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordWrites;
import dev.once.run.Mode;
import dev.once.run.RunConfig;
import dev.once.run.RunLock;
import dev.once.run.StackInfo;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A month-end burst in batch mode, as {@code dev/run --mode batch} runs it (its own {@link RunConfig}'s stack, on free
 * ports, with its lock file, which is all the tool is told), held where an operator must see it: jobs of three
 * documents, at most two in flight; a first job submitted and held running by the Gemini stand-in (its clock moves
 * only when told), a second gathered and sealed but refused by Gemini (429, as its quota refuses), and two more
 * documents queued behind the full cap. {@code once stats} counts the queue and the jobs by state, {@code once stuck}
 * lists the documents queued past the wait, the gathering never submitted and the job running past the threshold,
 * each with what to do, both reading only; the reconciler's gauge line (what the alerts and the dashboard chart)
 * says the same.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BatchBurstEndToEndTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SETTLED = Bounds.PATIENT;
  private static final int PER_JOB = 3;
  private static final int CAP = 2;

  private LocalStack stack;
  private RunLock lock;
  private Map<String, String> env;
  private Ports ports;
  private Firestore db;
  private Storage gcs;
  private int uploaded;

  @BeforeAll
  void start() {
    Path logs = Path.of(System.getProperty("once.logDir", "target/test-run"), "burst-" + System.nanoTime())
        .toAbsolutePath();
    RunConfig config = RunConfig.of(Mode.BATCH, Ports.free(), logs);
    stack = config.stack().geminiTick(null) // jobs run until told otherwise
        .env("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB))
        .env("BATCH_MAX_WAIT_SECONDS", "3600") // a job that is not full waits: only the cap and the tests move them
        .env("BATCH_MAX_JOBS_IN_FLIGHT", String.valueOf(CAP))
        // A submission's lease outlasts this: the refused gathering is not resumed by the reconciler during the test.
        .env("GEMINI_TIMEOUT_SECONDS", "300")
        .jars(FunctionJars.locate().check()).start();
    lock = RunLock.acquire(logs, StackInfo.of(config, ProcessHandle.current().pid(), stack)).lock();
    // The tool is told what the functions run with, as an operator sets it for a deployment that departs from the defaults.
    env = Map.of(Context.RUN_DIR, logs.toString(), "BATCH_MAX_JOBS_IN_FLIGHT", String.valueOf(CAP),
        "BATCH_MAX_WAIT_SECONDS", "3600");
    ports = config.ports();
    db = FirestoreClients.forEmulator(RunConfig.PROJECT, ports.hostPort(Part.FIRESTORE));
    gcs = StorageOptions.http().setHost(ports.url(Part.STORAGE)).setProjectId(RunConfig.PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
  }

  @AfterAll
  void stop() throws Exception {
    gcs.close();
    db.close();
    lock.close();
    stack.close();
  }

  @Test
  void statsAndStuck_showTheBurstHeldByTheCap_andChangeNothing() throws Exception {
    upload(PER_JOB); // a full job: submitted at once, and held running
    Await.until(SETTLED, () -> count(SUBMITTED.value()) == PER_JOB && stack.gemini().batchNames().size() == 1,
        "the first job submitted");
    stack.gemini().failNext(1, 429); // the next call, the second job's batches.create: quota
    upload(PER_JOB);
    try {
      Await.until(SETTLED, () -> refusedSubmissions() == 1, "the second job gathered, sealed, and refused by Gemini");
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; gatherings: " + gatherings(), e);
    }
    upload(2); // behind a full cap (one job running, one waiting for Gemini): queued
    Await.until(SETTLED, () -> count(QUEUED.value()) == 2, "two documents queued");
    Map<String, Object> before = snapshot();

    OnceRunner.Result stuck = Await.value(SETTLED, () -> {
      OnceRunner.Result r = once("stuck", "--queued-longer-than", "1s", "--jobs-longer-than", "1s");
      boolean all = r.out().contains("batch jobs running longer than 1s: 1") && r.out().contains("oldest first: 2")
          && r.out().contains("whose batch job was not made: 1");
      return all ? Optional.of(r) : Optional.<OnceRunner.Result>empty();
    }, "the burst older than the thresholds");
    assertEquals(Exit.OK, stuck.status(), stuck.all());
    String out = stuck.out();
    assertTrue(out.contains("documents queued longer than 1s (BATCH_MAX_WAIT_SECONDS 3600 s and more), oldest first: 2"
        + " (batch jobs in flight: 2 of 2, the cap: they wait for a job to complete and free a place"), stuck.all());
    assertTrue(
        out.contains("gatherings opened longer than 1s ago whose batch job was not made: 1 (the reconciler submits"
            + " them again every run"),
        stuck.all());
    assertTrue(out.matches("(?s).*\\n  gathering \\w+  opened \\S+, sealed \\S+, 3 documents\\n.*"), stuck.all());
    String job = stack.gemini().batchNames().get(0);
    assertTrue(out.matches("(?s).*\\n  " + job + "  gathering \\w+, 3 documents, submitted \\S+ \\(\\S+ ago\\)\\n.*"),
        stuck.all());

    OnceRunner.Result stats = once("stats");
    assertEquals(Exit.OK, stats.status(), stats.all());
    assertTrue(stats.out().matches("(?s).*\\n  batch mode, now: 2 documents queued \\(the oldest waiting \\S+\\), 3"
        + " gathered into jobs being made\\n.*"), stats.all());
    assertTrue(stats.out().contains("  batch jobs: 2 in flight of 2 (BATCH_MAX_JOBS_IN_FLIGHT): 0 gathering, 1 sealed"
        + " and not submitted, 1 submitted (the oldest "), stats.all());
    assertEquals(before, snapshot(), "stats and stuck only read");

    // What the alerts and the dashboard read: the reconciler's gauges, the same figures.
    reconcile();
    JsonNode gauges = gaugeLine();
    assertEquals(2, gauges.path("queued").asInt(), gauges.toString());
    assertEquals(3, gauges.path("gathered").asInt(), gauges.toString());
    assertEquals(CAP, gauges.path("jobs_in_flight").asInt(), gauges.toString());
    assertEquals(CAP, gauges.path("max_jobs_in_flight").asInt(), gauges.toString());
    assertEquals(1, gauges.path("jobs_submitted").asInt(), gauges.toString());
    assertTrue(gauges.path("oldest_queued_seconds").asLong() >= 1, gauges.toString());
    assertTrue(gauges.path("oldest_job_seconds").asLong() >= gauges.path("oldest_queued_seconds").asLong(),
        "the job was submitted before the last documents were queued: " + gauges);
  }

  private void upload(int documents) {
    for (int i = 0; i < documents; i++) {
      int n = uploaded++;
      gcs.create(BlobInfo.newBuilder(Topology.BUCKET, "burst/invoice-" + n + ".pdf").setContentType("application/pdf")
          .build(), InvoicePdf.of("BURST-" + n));
    }
  }

  private OnceRunner.Result once(String... args) {
    return OnceRunner.run(env, args);
  }

  private long count(String status) {
    return read(db.collection(RecordWrites.ANALYSES).whereEqualTo("status", status).get()).size();
  }

  /** Gatherings sealed whose submission's try is over (its claim released with Gemini's refusal): nothing moves. */
  private long refusedSubmissions() {
    FirestoreLedger ledger = new FirestoreLedger(db, LedgerOptions.defaults());
    return read(db.collection(Gatherings.COLLECTION).whereEqualTo("state", Gatherings.OPEN).get()).getDocuments()
        .stream().filter(g -> g.get("sealedAt") != null)
        // BatchSubmitter keys a gathering's submission "batch:" + its id.
        .filter(g -> ledger.lookup(IdempotencyKey.of("batch:" + g.getId()), Effects.SUBMIT)
            .map(r -> r.state() == RecordState.CLAIMED && !r.leaseLive() && r.error() != null).orElse(false))
        .count();
  }

  /** Each gathering's fields, for a failure's message. */
  private Map<String, Object> gatherings() {
    Map<String, Object> all = new TreeMap<>();
    for (QueryDocumentSnapshot doc : read(db.collection(Gatherings.COLLECTION).get())) {
      all.put(doc.getId(), doc.getData());
    }
    return all;
  }

  /** Every document the pipeline keeps, with its update time: what a write would change. */
  private Map<String, Object> snapshot() {
    Map<String, Object> all = new TreeMap<>();
    for (String collection : List.of(RecordWrites.ANALYSES, Gatherings.COLLECTION, "idempotency",
        RecordWrites.BILLING)) {
      for (QueryDocumentSnapshot doc : read(db.collection(collection).get())) {
        all.put(collection + "/" + doc.getId(), doc.getUpdateTime());
      }
    }
    return all;
  }

  private void reconcile() throws Exception {
    HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create(ports.url(Part.GEMINI_RECONCILER) + "/")).timeout(Bounds.PATIENT)
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, answer.statusCode(), answer.body());
  }

  /** The gauges of the reconciler's last "batch gauges" line. */
  private JsonNode gaugeLine() throws Exception {
    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(stack.function(Part.GEMINI_RECONCILER).log())) {
      if (line.startsWith("{") && line.contains(BatchGauges.MESSAGE)) {
        lines.add(JSON.readTree(line));
      }
    }
    assertTrue(!lines.isEmpty(), "the reconciler logged its gauges");
    JsonNode last = lines.get(lines.size() - 1);
    assertEquals("INFO", last.path("severity").asText(), last.toString());
    assertEquals("GeminiReconciler", last.path("function").asText(), last.toString());
    return last.path(BatchGauges.FIELD);
  }

  private static <T> T read(ApiFuture<T> future) {
    try {
      return future.get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
