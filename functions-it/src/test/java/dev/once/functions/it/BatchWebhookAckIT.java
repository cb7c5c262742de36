package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.WebhookDelivery;
import dev.once.local.gemini.WebhookMode;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.Faults;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.wire.gemini.WebhookSigner;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The webhook acknowledges a finished job at once, whatever the completion costs: it hands the job to BatchCompleted
 * through the batch completions topic. Here the completion cannot finish before the test lets it (the Gemini stand-in
 * holds every batches.get, which carries the job's answers, until released), the webhook still answers 2xx (how fast
 * is printed: issue 23's target is under a second), and the job of many documents is then completed exactly once:
 * one batches.get, one completion,
 * and per document one bill, one publication, one notification — although the job was handed off twice (Gemini's
 * two deliveries; a publish whose answer was lost and which the client sent again). The webhook runs, as deployed,
 * with no Gemini key. The second hand-off, thrown back while the first holds the claim, is answered non-2xx (so it is
 * redelivered) and logged as one in_flight line: BatchCompleted runs as on Cloud Run ({@code K_SERVICE} set, so the
 * invoker logs JSON for Cloud Logging), and its log carries no error and no stack trace of it.
 */
class BatchWebhookAckIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int DOCUMENTS = 20;
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PubSubFaults pubsub;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    pubsub = PubSubFaults.start(PubSubEmulator.shared().hostPort());
    stack = PipelineStack.start(PipelineStack.Config.sync().batch()
        .withEnv("BATCH_MAX_DOCUMENTS", String.valueOf(DOCUMENTS))
        // The held batches.get waits for the test's release, however long the machine makes it: far longer than that.
        .withEnv("GEMINI_TIMEOUT_SECONDS", String.valueOf(Bounds.PATIENT.multipliedBy(2).toSeconds()))
        .withEnv("PUBSUB_EMULATOR_HOST", pubsub.hostPort()));
    // As on Cloud Run: the invoker sees K_SERVICE and logs through its JsonLogHandler, what Cloud Logging parses.
    stack.restartWithEnv("BatchCompleted", Map.of("K_SERVICE", "once-batch-completed"));
  }

  @AfterAll
  static void stop() {
    stack.close();
    pubsub.close();
  }

  @Test
  void theWebhookAnswersAtOnce_whileTheCompletionIsHeld_andTheJobIsCompletedOnce() throws Exception {
    stack.gemini.webhookMode(WebhookMode.NEVER); // this test sends Gemini's deliveries itself, and times them
    // The public function runs as deployed, without a Gemini key, a Gemini server or the results topic.
    assertTrue(Collections.disjoint(stack.environment("GeminiWebhook").keySet(),
        List.of("GEMINI_API_KEY", "GEMINI_BASE_URL", "RESULTS_TOPIC")), "the webhook has no Gemini key");
    // A warm instance, as deployed (webhook_min_instances): its clients built by a first delivery (a job not ours).
    assertEquals("queued", deliver("batches/warm-up", "w0").status());
    Await.until(DEADLINE, () -> completionLines("gemini:batches/warm-up", "rejected") == 1, "the warm-up refused");
    List<String> keys = uploadAJob("held");
    String job = jobOf(keys);
    String jobKey = "gemini:" + job;
    long getsBefore = stack.gemini.count("batches.get");
    Faults.Gate held = stack.gemini.hold("batches.get");
    try {
      stack.gemini.finish(job, BatchState.SUCCEEDED);
      // Gemini's two deliveries of one event (new ids, as TWICE_NEW_IDS): each is handed off, neither waits.
      Answer first = deliver(job, "w1");
      Answer second = deliver(job, "w2");
      for (Answer answer : List.of(first, second)) {
        assertEquals(200, answer.code(), answer.toString());
        assertEquals("queued", answer.status(), answer.toString());
        System.out.println("the webhook answered " + answer); // issue 23's target: under a second
      }
      // Both answered while no batches.get could return: nothing of the job is published yet, by construction.
      assertEquals(0, keys.stream().mapToInt(key -> attributed(stack.published(), key).size()).sum(),
          "no result before the completion");
      assertEquals(2, pubsub.carriedOut(jobKey), "two hand-offs of the job");
      // The completion holds its claim at the stand-in until released, so the second hand-off meets it, however slow
      // the machine: released once it was thrown back.
      Await.until(DEADLINE, () -> held.arrived() >= 1 && completionLines(jobKey, "in_flight") >= 1,
          "the completion's batches.get held, and the second hand-off thrown back");
    } finally {
      held.release();
    }
    Await.until(DEADLINE, () -> keys.stream().allMatch(key -> stack.notifiedWith(key).size() == 1),
        "every document of the job notified");
    // The second hand-off met the first's claim, was redelivered, and then found the job completed.
    Await.until(DEADLINE, () -> completionLines(jobKey, "duplicate") == 1, "the second hand-off absorbed");
    assertEquals(1, completionLines(jobKey, "processed"), "one completion");
    assertEquals(1, stack.gemini.count("batches.get") - getsBefore, "the completion asked Gemini for the job once");
    assertOncePerDocument(keys, job);
    assertRedeliveryLoggedAsOneInfoLine(jobKey);

    // A delivery after the completion is answered from one read, and hands nothing off.
    Answer late = deliver(job, "w3");
    assertEquals(200, late.code(), late.toString());
    assertEquals("duplicate", late.status(), late.toString());
    assertEquals(2, pubsub.carriedOut(jobKey), "no third hand-off");
    JsonNode summary = stack.reconcile();
    assertEquals(0, summary.path("processed").asInt(), "nothing left for the reconciler: " + summary);
  }

  /**
   * The hand-off's publish is carried out by Pub/Sub, then fails (INTERNAL, the gRPC code of a 500): the client
   * publishes again. Two messages for one job, from one webhook delivery; one completion.
   */
  @Test
  void aHandOffWhosePublishFailedAfterLanding_isSentAgain_andTheJobIsCompletedOnce() {
    List<String> keys = uploadAJob("lost-answer");
    String job = jobOf(keys);
    String jobKey = "gemini:" + job;
    pubsub.failFirstPublishOf(jobKey, AmbiguousFailure.serverError(500));
    stack.gemini.webhookMode(job, WebhookMode.NORMAL); // the stand-in's own signed delivery, with its retries

    stack.gemini.finish(job, BatchState.SUCCEEDED);
    Await.until(DEADLINE, () -> keys.stream().allMatch(key -> stack.notifiedWith(key).size() == 1),
        "every document of the job notified");

    assertEquals(1, pubsub.failed(jobKey), "the first publish failed after it landed");
    assertEquals(2, pubsub.carriedOut(jobKey), "two messages for the job");
    List<WebhookDelivery> deliveries = stack.gemini.webhookDeliveries().stream()
        .filter(d -> d.batchName().equals(job)).toList();
    assertTrue(!deliveries.isEmpty() && deliveries.get(deliveries.size() - 1).delivered(), deliveries.toString());
    Await.until(DEADLINE, () -> completionLines(jobKey, "duplicate") == 1, "the second message absorbed");
    assertEquals(1, completionLines(jobKey, "processed"), "one completion");
    assertOncePerDocument(keys, job);
  }

  /**
   * The hand-off thrown back for redelivery: the relay had to deliver it again (a non-2xx answer), the function logged
   * one in_flight line at INFO, and nothing else of it — no "Failed to execute" from the invoker, no stack trace.
   */
  private static void assertRedeliveryLoggedAsOneInfoLine(String jobKey) throws Exception {
    List<JsonNode> inFlight = EventLines.of(stack.function("BatchCompleted").log(), 0, "BatchCompleted").stream()
        .filter(line -> EventLines.isAbout(line, jobKey))
        .filter(line -> "in_flight".equals(line.path(Log.LABELS).path("outcome").asText())).toList();
    assertTrue(!inFlight.isEmpty(), "the second hand-off met the first's claim");
    inFlight.forEach(line -> assertEquals("INFO", line.path("severity").asText(), line.toString()));
    int port = stack.function("BatchCompleted").url().getPort();
    assertTrue(stack.relay.results().stream().anyMatch(r -> r.target().getPort() == port && r.attempts() >= 2),
        "a hand-off answered non-2xx and delivered again: " + stack.relay.results());
    String log = Files.readString(stack.function("BatchCompleted").log());
    for (String error : List.of("Failed to execute", "\"severity\": \"ERROR\"", "Redeliver")) {
      assertTrue(!log.contains(error), "'" + error + "' in BatchCompleted's log:\n" + log);
    }
  }

  /** {@value #DOCUMENTS} documents: one full job, submitted as the last one is queued. */
  private static List<String> uploadAJob(String folder) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      Blob blob = stack.upload(String.format("%s/invoice-%02d.pdf", folder, i), InvoicePdf.of(folder + i),
          "application/pdf");
      keys.add(key(blob));
    }
    return keys;
  }

  /** The one job every document of {@code keys} was submitted in. */
  private static String jobOf(List<String> keys) {
    List<String> jobs = Await.value(DEADLINE, () -> {
      // One read of the analyses per poll, not one per document.
      List<QueryDocumentSnapshot> analyses = stack.documents("analyses");
      List<String> named = keys.stream().map(key -> withKey(analyses, key).stream()
          .map(a -> a.getString("job")).filter(Objects::nonNull).findFirst().orElse(null)).toList();
      return named.contains(null) ? Optional.empty() : Optional.of(named);
    }, "every document submitted");
    assertEquals(1, jobs.stream().distinct().count(), "one job for the " + DOCUMENTS + " documents: " + jobs);
    return jobs.get(0);
  }

  /** BatchCompleted's event lines for the job with {@code outcome}, whichever effect they are about. */
  private static long completionLines(String jobKey, String outcome) {
    return EventLines.of(stack.function("BatchCompleted").log(), 0, "BatchCompleted").stream()
        .filter(line -> EventLines.isAbout(line, jobKey))
        .filter(line -> outcome.equals(line.path(Log.LABELS).path("outcome").asText()))
        .count();
  }

  private static void assertOncePerDocument(List<String> keys, String job) {
    List<QueryDocumentSnapshot> analyses = stack.documents("analyses");
    List<QueryDocumentSnapshot> billing = stack.documents("billing");
    List<PubsubMessage> published = stack.published();
    for (String key : keys) {
      List<QueryDocumentSnapshot> analysis = withKey(analyses, key);
      assertEquals(1, analysis.size(), key);
      assertEquals("analysed", analysis.get(0).getString("status"), key);
      assertEquals(job, analysis.get(0).getString("job"), key);
      assertEquals(1, withKey(billing, key).size(), "one bill of " + key);
      assertEquals(1, attributed(published, key).size(), "one publication of " + key);
      assertEquals(1, stack.notifiedWith(key).size(), "one notification of " + key);
    }
  }

  private record Answer(int code, String status, Duration took) {}

  /** One signed static delivery of the job's success, as Gemini sends it, timed from send to answer. */
  private static Answer deliver(String job, String webhookId) throws Exception {
    String body = "{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"" + job + "\"}}";
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    long now = Instant.now().getEpochSecond();
    Map<String, String> headers = Map.of("webhook-id", webhookId, "webhook-timestamp", String.valueOf(now),
        "webhook-signature", WebhookSigner.fromSecret(stack.webhookSecret).sign(webhookId, now, bytes),
        "content-type", "application/json");
    long started = System.nanoTime();
    HttpResponse<String> response = stack.post("GeminiWebhook", bytes, headers);
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    return new Answer(response.statusCode(), JSON.readTree(response.body()).path("status").asText(), took);
  }
}
