package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.WriteBatch;
import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.DocumentSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A batch job completed in ten chunks, with BatchCompleted's process (the webhook hands it the job) killed (SIGKILL)
 * half-way: after the commit of chunk 4, before its publishes. The replaced process (and the reconciler, run as Cloud
 * Scheduler would) resumes where it stopped. Exactly, per document: one analysis, one bill, one publication, one
 * notification, no other Gemini job; the gathering leaves flight only once the last chunk is done (the job's
 * completion is recorded after every chunk's publishes).
 *
 * <p>Chunks of 10 documents here ({@code -Donce.completion.chunk}, a property only tests pass; deployed, a chunk is
 * 100): the same completion, the same ten chunks and the same kill with 100 documents instead of 1,000, a tenth of the
 * analyses, bills, publications and notifications the suite's forks used to pay for beside each other.
 *
 * <p>The job is made as its submission makes it (BatchJobs.submit, one inlined request per document) and recorded as
 * its submission records it (the gathering sealed with its members, each analysis told its job), rather than from
 * uploads: what is under test is the completion, and uploads through the relay take minutes here.
 */
class BatchChunkedCompletionIT {
  private static final int CHUNK = 10;
  private static final int CHUNKS = 10;
  private static final int DOCUMENTS = CHUNK * CHUNKS;
  private static final int KILLED_CHUNK = 4;
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(5);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // A patient relay, as Eventarc is: 60 tries a second apart ran out while a loaded machine held a claim longer.
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(DOCUMENTS), "BATCH_MAX_WAIT_SECONDS", "3600")));
    stack.keepAlive();
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @Test
  void aJobOfTenChunks_killedHalfWayThroughItsCompletion_completesEachDocumentOnce() throws Exception {
    Path crashLog = stack.logDir.resolve("chunked.crashes");
    Files.deleteIfExists(crashLog);
    long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
    String gathering = UUID.randomUUID().toString().replace("-", "");
    List<String> keys = new ArrayList<>();
    List<BatchJobs.Request> requests = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      IdempotencyKey key = IdempotencyKey.of(String.format("gcs:%s/chunked/doc-%04d.pdf#1", PipelineStack.BUCKET, i));
      keys.add(key.value());
      requests.add(BatchJobs.Request.of(gathering, key, InvoicePdf.of("chunked" + i), "application/pdf"));
    }
    Client client = Client.builder().apiKey(stack.environment().get("GEMINI_API_KEY")).vertexAI(false)
        .httpOptions(HttpOptions.builder().baseUrl(stack.gemini.baseUrl()).build()).build();
    String job = new BatchJobs(client, "gemini-3.5-flash-lite", Optional.empty()).submit(gathering, requests).name()
        .orElseThrow();
    recordSubmitted(gathering, job, requests);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut);

    IdempotencyKey jobKey = GeminiCompletionKeys.ofName(job);
    List<String> crashFlags = List.of("-Donce.completion.chunk=" + CHUNK, "-Donce.crash.at=after-complete:complete",
        "-Donce.crash.keys=" + Pattern.quote(jobKey.value() + "#chunk-" + KILLED_CHUNK),
        "-Donce.crash.log=" + crashLog.toAbsolutePath());
    stack.restart("BatchCompleted", crashFlags);
    stack.restart("GeminiReconciler", crashFlags);

    stack.gemini.finish(job, BatchState.SUCCEEDED);
    awaitReconciling(() -> kills(crashLog) == 1, "the kill half-way");
    FirestoreLedger ledger = stack.ledger();
    awaitReconciling(() -> ledger.lookup(jobKey, "publish").map(r -> r.state() == RecordState.DONE).orElse(false),
        "the job's completion");
    Await.until(DEADLINE, () -> counted(stack.notifications().stream().map(r -> r.header("Idempotency-Key"))).size()
        == DOCUMENTS, "every document notified");
    Await.until(DEADLINE, stack::relayIdle, "the relay idle");
    // The results topic's tap answers a pull with some of its messages: pulled until every document's came.
    Await.until(DEADLINE, () -> counted(stack.published().stream().map(m -> m.getAttributesMap()
        .get("idempotency_key"))).size() == DOCUMENTS, "every document's result pulled");

    assertEquals(1, kills(crashLog), "killed once, after chunk " + KILLED_CHUNK + "'s commit");
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "no other Gemini job");
    List<QueryDocumentSnapshot> analyses = stack.documents("analyses");
    assertEquals(Set.of("analysed"), analyses.stream().map(a -> a.getString("status")).collect(Collectors.toSet()));
    assertEquals(Set.of(job), analyses.stream().map(a -> a.getString("job")).collect(Collectors.toSet()));
    assertExactlyOnce(keys, analyses.stream().map(a -> a.getString("key")), "analysed");
    assertExactlyOnce(keys, stack.documents("billing").stream().map(b -> b.getString("key")), "billed");
    assertExactlyOnce(keys, stack.published().stream().map(m -> m.getAttributesMap().get("idempotency_key")),
        "published");
    assertExactlyOnce(keys, stack.notifications().stream().map(r -> r.header("Idempotency-Key")), "notified");

    QueryDocumentSnapshot completedGathering = stack.documents("gatherings").stream()
        .filter(g -> g.getId().equals(gathering)).findFirst().orElseThrow();
    assertFalse(Boolean.TRUE.equals(completedGathering.getBoolean("inFlight")), "out of flight at the end");
    Instant completed = ledger.lookup(jobKey, "complete").map(LedgerRecord::updatedAt).orElseThrow();
    for (int chunk = 0; chunk < CHUNKS; chunk++) {
      IdempotencyKey chunkKey = IdempotencyKey.of(jobKey.value() + "#chunk-" + chunk);
      LedgerRecord published = ledger.lookup(chunkKey, "publish").orElseThrow(() -> new AssertionError(chunkKey + ""));
      assertEquals(RecordState.DONE, published.state(), chunkKey.value());
      assertTrue(!published.updatedAt().isAfter(completed),
          "chunk " + chunk + " published before the job (and its gathering) was completed");
    }
  }

  /** What the gathering's submission records: its members sealed, the job on it, each member told its job. */
  private static void recordSubmitted(String gathering, String job, List<BatchJobs.Request> requests) throws Exception {
    List<String> members = requests.stream().map(request -> request.documentKey().documentId()).toList();
    WriteBatch batch = stack.db.batch();
    batch.set(stack.db.collection("gatherings").document(gathering), Map.of("state", "submitted", "inFlight", true,
        "openedAt", FieldValue.serverTimestamp(), "members", members, "job", job, "documents", members.size()));
    for (BatchJobs.Request request : requests) {
      String name = request.documentKey().value().substring(("gcs:" + PipelineStack.BUCKET + "/").length(),
          request.documentKey().value().length() - "#1".length());
      DocumentSource source = new DocumentSource(PipelineStack.BUCKET, name, 1, "application/pdf",
          request.content().length, null, null);
      batch.set(stack.db.collection("analyses").document(request.documentKey().documentId()), Map.of(
          "key", request.documentKey().value(), "status", "submitted", "mode", "batch", "source", source.toMap(),
          "size", (long) request.content().length, "batch", gathering, "job", job,
          "updatedAt", FieldValue.serverTimestamp()));
    }
    batch.commit().get();
  }

  private static void assertExactlyOnce(List<String> keys, Stream<String> seen, String what) {
    Map<String, Long> counts = counted(seen);
    List<String> wrong = keys.stream().filter(key -> counts.getOrDefault(key, 0L) != 1).limit(5).toList();
    assertEquals(List.of(), wrong, what + " other than once (first few; counts "
        + wrong.stream().map(key -> counts.getOrDefault(key, 0L)).toList() + ")");
    assertEquals(keys.size(), counts.size(), what + ": no other key");
  }

  private static Map<String, Long> counted(Stream<String> keys) {
    return keys.filter(Objects::nonNull).collect(Collectors.groupingBy(Function.identity(),
        Collectors.counting()));
  }

  /** Waits for {@code done}, running the reconciler every few seconds, as Cloud Scheduler would. */
  private static void awaitReconciling(BooleanSupplier done, String what) {
    stack.awaitReconciling(DEADLINE, RECONCILE_AFTER, done, what);
  }

  private static long kills(Path crashLog) {
    try {
      return Files.exists(crashLog) ? Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count() : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
