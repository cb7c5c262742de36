package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FreePort;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.WebhookMode;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.gemini.WebhookSigner;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Batch mode end to end: upload → one batch job → the Gemini stand-in finishes it → webhook (doubled, or never)
 * and reconciler → one completion, one bill, one result, one notification. And the webhook's answers to hostile
 * requests, which change nothing.
 */
class BatchPipelineIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().batch());
  }

  private static String submitted(Blob blob) {
    String key = key(blob);
    return Await.value(DEADLINE, () -> stack.byKey("analyses", key).stream()
        .filter(a -> "submitted".equals(a.getString("status")) || a.getString("job") != null)
        .map(a -> a.getString("job")).findFirst(), "a batch job submitted for " + key);
  }

  /**
   * The job's completion was logged once as processed, with what it cost and the model: the line the spend metric
   * ({@code once_gemini_spend}, observability.tf) reads in batch mode.
   */
  private static void assertSpendLogged(String function, String job) {
    String jobKey = "gemini:" + job;
    List<JsonNode> lines = Await.value(DEADLINE, () -> Optional.of(
        EventLines.of(stack.function(function).log(), function, jobKey, "complete", "processed"))
        .filter(found -> !found.isEmpty()), function + "'s processed complete line for " + jobKey);
    assertEquals(1, lines.size(), "one completion: " + lines);
    JsonNode line = lines.get(0);
    assertTrue(line.path("costMicroUsd").asLong() > 0, "the job's cost: " + line);
    assertTrue(line.path("model").asText().startsWith("gemini-"), "the model: " + line);
  }

  private static int notified(String key) {
    return (int) stack.notifications().stream().filter(r -> key.equals(r.header("Idempotency-Key"))).count();
  }

  @Test
  void oneBatchJobPerDocument_andOneCompletion_whenTheWebhookComesTwiceAndTheReconcilerRuns() throws Exception {
    long jobsBefore = stack.gemini.count("batchGenerateContent");
    stack.gemini.webhookMode(WebhookMode.TWICE_NEW_IDS);
    stack.storage.notifyTwice(true);
    Blob blob;
    try {
      blob = stack.upload("batch/acme-0002.pdf", InvoicePdf.of("0002"), "application/pdf");
    } finally {
      stack.storage.notifyTwice(false);
    }
    String key = key(blob);
    String job = submitted(blob);
    Await.until(DEADLINE, stack::relayIdle, "both finalize notifications handled");
    assertEquals(1, stack.gemini.count("batchGenerateContent") - jobsBefore, "one batch job for the document");

    stack.gemini.finish(job, BatchState.SUCCEEDED);
    Await.until(DEADLINE, () -> notified(key) == 1, "the result notified");
    Await.until(DEADLINE, () -> stack.gemini.webhookDeliveries().stream()
        .filter(d -> d.batchName().equals(job) && d.delivered()).count() == 2, "both webhooks answered");
    assertSpendLogged("BatchCompleted", job);
    JsonNode summary = stack.reconcile();
    assertEquals(0, summary.path("processed").asInt(), "the reconciler found nothing left to do: " + summary);
    assertTrue(summary.path("relisted").asInt() >= 1, summary.toString());

    List<QueryDocumentSnapshot> analyses = withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size());
    assertEquals("analysed", analyses.get(0).getString("status"));
    assertEquals(job, analyses.get(0).getString("job"));
    List<QueryDocumentSnapshot> billing = withKey(stack.documents("billing"), key);
    assertEquals(1, billing.size());
    assertEquals(Boolean.TRUE, billing.get(0).getBoolean("batch"));
    assertEquals(1, attributed(stack.published(), key).size(), "one published result");
    assertEquals(1, notified(key), "one notification");
    List<String> answers = stack.gemini.webhookDeliveries().stream().filter(d -> d.batchName().equals(job))
        .map(d -> d.status() + "").toList();
    assertEquals(List.of("200", "200"), answers, "both webhooks were acknowledged");
  }

  /**
   * Batch mode: the same invoice uploaded again under another name while the first waits for its job is not queued
   * (no second request in any job, no reservation): it waits, deferred, since "analysed" is known only when the job
   * completes. The reconciler resumes it after that: it is published and notified as a duplicate of the first, which
   * its job bills once.
   */
  @Test
  void theSameBytesUploadedTwice_makeOneRequestInOneJob_andOneBill() throws Exception {
    byte[] invoice = InvoicePdf.of("batch-same-" + System.nanoTime());
    long jobsBefore = stack.gemini.count("batchGenerateContent");
    Blob first = stack.upload("batch/same.pdf", invoice, "application/pdf");
    String firstKey = key(first);
    String job = submitted(first);
    String copy = key(stack.upload("batch/same-again.pdf", invoice, "application/pdf"));
    Await.until(DEADLINE, () -> withKey(stack.documents("analyses"), copy).stream()
        .anyMatch(a -> "deferred".equals(a.getString("status"))), "the copy waiting for the first's job");
    assertEquals(0, notified(copy), "nothing said of the copy while the first is not analysed");
    stack.gemini.finish(job, BatchState.SUCCEEDED);
    Await.until(DEADLINE, () -> notified(firstKey) == 1 && stack.relayIdle(), "the first notified");
    stack.awaitReconciling(DEADLINE, Duration.ofSeconds(2), () -> notified(copy) == 1,
        "the copy notified as a duplicate");

    assertEquals(1, stack.gemini.count("batchGenerateContent") - jobsBefore, "one batch job");
    assertEquals(1, stack.gemini.requests(job).size(), "one request in it");
    assertEquals(1, withKey(stack.documents("billing"), firstKey).size(), "one bill");
    assertEquals(0, withKey(stack.documents("billing"), copy).size());
    QueryDocumentSnapshot analysis = withKey(stack.documents("analyses"), copy).get(0);
    assertEquals("duplicate", analysis.getString("status"));
    assertEquals(firstKey, analysis.getString("duplicateOf"));
    assertEquals(1, attributed(stack.published(), copy).size());
  }

  @Test
  void jobWhoseWebhookNeverComes_isCompletedByTheReconciler() {
    stack.gemini.webhookMode(WebhookMode.NEVER);
    try {
      Blob blob = stack.upload("batch/acme-0003.pdf", InvoicePdf.of("0003"), "application/pdf");
      String key = key(blob);
      String job = submitted(blob);
      stack.gemini.finish(job, BatchState.SUCCEEDED);
      JsonNode summary = stack.reconcile();
      assertEquals(1, summary.path("processed").asInt(), summary.toString());
      assertSpendLogged("GeminiReconciler", job);
      Await.until(DEADLINE, () -> notified(key) == 1, "the result notified");
      assertEquals(0, stack.reconcile().path("processed").asInt(), "a second run completes nothing");
      assertEquals("analysed", withKey(stack.documents("analyses"), key).get(0).getString("status"));
      assertEquals(1, withKey(stack.documents("billing"), key).size());
    } finally {
      stack.gemini.webhookMode(WebhookMode.NORMAL);
    }
  }

  /**
   * A job that failed is not its document's failure: the document goes back to the queue, into a new job (made by the
   * reconciler's next run), which answers it: analysed once, billed once, notified once.
   */
  @Test
  void failedJob_sendsItsDocumentIntoANewJob_whichAnalysesItOnce() throws Exception {
    Blob blob = stack.upload("batch/acme-0004.pdf", InvoicePdf.of("0004"), "application/pdf");
    String key = key(blob);
    String job = submitted(blob);
    stack.gemini.finish(job, BatchState.FAILED);
    Supplier<Optional<String>> newJob = () -> stack.byKey("analyses", key)
        .stream().map(a -> a.getString("job")).filter(named -> named != null && !named.equals(job)).findFirst();
    stack.awaitReconciling(DEADLINE, Duration.ofSeconds(2), () -> newJob.get().isPresent(), "a new job for it");
    String second = newJob.get().orElseThrow();
    stack.gemini.finish(second, BatchState.SUCCEEDED);
    Await.until(DEADLINE, () -> notified(key) == 1, "the result notified");
    QueryDocumentSnapshot analysis = withKey(stack.documents("analyses"), key).get(0);
    assertEquals(List.of("analysed", 1L), List.of(analysis.getString("status"), analysis.getLong("reruns")));
    assertEquals(1, withKey(stack.documents("billing"), key).size(), "billed once, for the job that answered");
    JsonNode result = JSON.readTree(attributed(stack.published(), key).get(0).getData().toByteArray());
    assertEquals("analysed", result.path("status").asText());
    assertEquals(1, attributed(stack.published(), key).size());
  }

  /**
   * A change of ANALYSIS_MODE rolls out while a document's deliveries are in flight: they reach a revision of
   * each mode. Both claim the same analyse effect, so the document is analysed, paid for and notified once.
   */
  @Test
  void deliveriesReachingASyncAndABatchRevision_analyseTheDocumentOnce() throws Exception {
    Map<String, String> syncEnvironment = new HashMap<>(stack.environment());
    syncEnvironment.put("ANALYSIS_MODE", "sync");
    try (FunctionProcess syncRevision = FunctionProcess.start(
        new FunctionProcess.Launch(Path.of(System.getProperty("once.invokerJar")),
            Path.of(System.getProperty("once.functionJar")), List.of("-XX:TieredStopAtLevel=1")),
        "dev.once.functions.DocumentUploaded", FreePort.pick(), syncEnvironment,
        stack.logDir.resolve("DocumentUploaded-sync-revision.log"))) {
      // Batch first, then the same finalize on the sync revision: the sync revision sees the submission.
      long generateBefore = stack.gemini.count("generateContent");
      long jobsBefore = stack.gemini.count("batchGenerateContent");
      Blob first = stack.upload("switch/batch-first.pdf", InvoicePdf.of("W1"), "application/pdf");
      String job = submitted(first);
      CloudEvent finalize = stack.lastEvent(CloudEvent.STORAGE_FINALIZED, first.getName());
      assertEquals(200, send(finalize, syncRevision.url()).statusCode());
      assertEquals(generateBefore, stack.gemini.count("generateContent"), "the sync revision did not analyse it again");
      assertEquals(1, stack.gemini.count("batchGenerateContent") - jobsBefore);
      stack.gemini.finish(job, BatchState.SUCCEEDED);
      Await.until(DEADLINE, () -> notified(key(first)) == 1, "the batch result notified");

      // Sync first, then the batch revision: the batch revision publishes the sync result instead of a job.
      stack.pause("DocumentUploaded");
      Blob second;
      try {
        second = stack.upload("switch/sync-first.pdf", InvoicePdf.of("W2"), "application/pdf");
        Await.until(DEADLINE, () -> stack.relay.events().stream()
            .anyMatch(e -> e.dataText().contains(second.getName())), "the finalize event");
        assertEquals(200, send(stack.lastEvent(CloudEvent.STORAGE_FINALIZED, second.getName()), syncRevision.url())
            .statusCode());
      } finally {
        stack.resume("DocumentUploaded");
      }
      Await.until(DEADLINE, () -> notified(key(second)) == 1 && stack.relayIdle(), "the sync result notified");
      assertEquals(1, stack.gemini.count("batchGenerateContent") - jobsBefore,
          "no batch job for the sync-analysed one");
      assertEquals(1, stack.gemini.count("generateContent") - generateBefore, "one analysis of the second document");
      for (String key : List.of(key(first), key(second))) {
        assertEquals(1, withKey(stack.documents("analyses"), key).size());
        assertEquals(1, withKey(stack.documents("billing"), key).size());
        assertEquals("analysed", withKey(stack.documents("analyses"), key).get(0).getString("status"));
      }
    }
  }

  private static HttpResponse<String> send(CloudEvent event, URI url) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(url)
        .timeout(Bounds.CALL)
        .header("ce-specversion", "1.0").header("ce-id", event.id() + "-again").header("ce-source", event.source())
        .header("ce-type", event.type()).header("ce-subject", event.subject())
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(event.data()));
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void hostileWebhookRequests_getTheirDocumentedAnswer_andChangeNothing() throws Exception {
    String jobBody = "{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"batches/never-seen\"}}";
    int recordsBefore = stack.ledgerRecords();
    long getsBefore = stack.gemini.count("batches.get");
    WebhookSigner signer = WebhookSigner.fromSecret(stack.webhookSecret);
    long now = Instant.now().getEpochSecond();

    assertAnswer(401, "invalid_signature", jobBody, Map.of("webhook-id", "m1", "webhook-timestamp", "" + now,
        "webhook-signature", WebhookSigner.fromSecret(WebhookSigner.newSecret()).sign("m1", now, bytes(jobBody))));
    assertAnswer(401, "invalid_signature", jobBody, Map.of());
    long stale = now - 600;
    assertAnswer(401, "invalid_signature", jobBody, signed(signer, "m2", stale, jobBody));
    long future = now + 600;
    assertAnswer(401, "invalid_signature", jobBody, signed(signer, "m3", future, jobBody));
    assertAnswer(200, "ignored", "{not json", signed(signer, "m4", now, "{not json"));
    assertAnswer(200, "ignored", "[1,2]", signed(signer, "m5", now, "[1,2]"));
    String nameless = "{\"type\":\"batch.succeeded\",\"data\":{\"output_file_uri\":\"files/x\"}}";
    assertAnswer(200, "ignored", nameless, signed(signer, "m6", now, nameless));
    String other = "{\"type\":\"file.created\",\"data\":{\"id\":\"files/x\"}}";
    assertAnswer(200, "ignored", other, signed(signer, "m7", now, other));
    String huge = "{\"type\":\"batch.succeeded\",\"pad\":\"" + "x".repeat(1024 * 1024) + "\"}";
    try {
      assertAnswer(413, "too_large", huge, signed(signer, "m8", now, huge));
    } catch (UncheckedIOException closed) {
      // Answered 413 once the limit is read and the connection closed on the rest: a client still sending may see
      // the close before the answer (as in BadInputCorpusIT). Refused either way; the job is still completed once.
    }

    HttpResponse<String> get = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(stack.function("GeminiWebhook").url()).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(405, get.statusCode());

    assertEquals(recordsBefore, stack.ledgerRecords(), "no ledger record was written");
    assertEquals(getsBefore, stack.gemini.count("batches.get"), "no Gemini call was made");
  }

  @Test
  void validWebhookForAJobThatIsNotOurs_isRefusedOnce_andCostsOneReadAfterwards() throws Exception {
    WebhookSigner signer = WebhookSigner.fromSecret(stack.webhookSecret);
    long now = Instant.now().getEpochSecond();
    String body = "{\"type\":\"batch.succeeded\",\"data\":{\"id\":\"batches/not-ours\"}}";
    HttpResponse<String> first = stack.post("GeminiWebhook", bytes(body), signed(signer, "n1", now, body));
    assertEquals(200, first.statusCode(), first.body());
    assertTrue(first.body().contains("\"queued\""), first.body());
    Await.until(DEADLINE, () -> EventLines.of(stack.function("BatchCompleted").log(), "BatchCompleted",
        "gemini:batches/not-ours", "complete", "rejected").size() == 1, "BatchCompleted to refuse the job once");
    long gets = stack.gemini.count("batches.get");
    HttpResponse<String> again = stack.post("GeminiWebhook", bytes(body), signed(signer, "n2", now, body));
    assertEquals(200, again.statusCode());
    assertTrue(again.body().contains("\"duplicate\""), again.body());
    assertEquals(gets, stack.gemini.count("batches.get"), "the second delivery asked Gemini nothing");
  }

  private static void assertAnswer(int code, String status, String body, Map<String, String> headers) {
    HttpResponse<String> response = stack.post("GeminiWebhook", bytes(body), headers);
    assertEquals(code, response.statusCode(), response.body());
    assertTrue(response.body().contains("\"status\":\"" + status + "\""), response.body());
    assertFalse(response.body().contains("Exception") || response.body().contains("\tat "), response.body());
    assertFalse(response.body().contains(stack.webhookSecret.substring(6, 20)), "no secret in the answer");
  }

  private static Map<String, String> signed(WebhookSigner signer, String id, long timestamp, String body) {
    return Map.of("webhook-id", id, "webhook-timestamp", String.valueOf(timestamp),
        "webhook-signature", signer.sign(id, timestamp, bytes(body)), "content-type", "application/json");
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
