package dev.once.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.local.http.StandIn;
import dev.once.local.storage.StorageStandIn;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * The three stand-ins wired by URL only, configured as the local stack configures them: a storage upload becomes
 * a CloudEvent POST from the relay (the notification sent to the relay over HTTP); a batch in the Gemini stand-in
 * ends on its own ticker and sends its webhook; the counters are read over the admin HTTP endpoints, as dev/demo
 * reads them from another process. (Unknown options, once the stand-ins' own: dev/run's RunnerProcessTest.)
 */
class StandInsByUrlTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static HttpResponse<String> send(String method, String url, String body, String... headers)
      throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static long adminCounter(StandIn standIn, String name) {
    try {
      JsonNode counters = Json.parseTrusted(send("GET", standIn.baseUrl() + "/_admin/counters", null).body());
      return counters.path(name).asLong(0);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void storageAndRelay_deliverAFinalizeEventToAFunctionUrl() throws Exception {
    try (Receiver function = Receiver.start();
        EventarcRelay relay = EventarcRelay.start(EventarcRelay.Options.defaults()
            .withRetry(RetryPolicy.defaults().withMaxAttempts(3)));
        StorageStandIn storage = StorageStandIn.start(StorageStandIn.Options.defaults()
            .withNotifyUrl(relay.storageIngestUrl()))) {
      relay.route(CloudEvent.STORAGE_FINALIZED, function.url("/fn"));
      HttpResponse<String> upload = send("POST", storage.baseUrl()
          + "/upload/storage/v1/b/docs/o?uploadType=media&name=in%2Fa.pdf", "%PDF", "Content-Type", "application/pdf");
      assertEquals(200, upload.statusCode(), upload.body());

      Receiver.Received event = Await.value(Bounds.CALL,
          () -> function.receivedOn("/fn").stream().findFirst(), "the finalize CloudEvent");
      assertEquals("google.cloud.storage.object.v1.finalized", event.header("ce-type"));
      assertEquals("objects/in/a.pdf", event.header("ce-subject"));
      assertEquals(Json.parseTrusted(upload.body()).get("generation").asText(),
          Json.parseTrusted(event.text()).get("generation").asText());
      // The function has the event before the relay has its answer: wait for the relay's count.
      Await.until(Bounds.CALL, () -> adminCounter(relay, "delivered") == 1, "the relay to count it");
    }
  }

  @Test
  void gemini_endsABatchOnItsTicker_andSendsTheWebhook() throws Exception {
    String secret = "whsec_" + Base64.getEncoder().encodeToString("local-test-key".getBytes());
    try (Receiver hooks = Receiver.start();
        GeminiStandIn gemini = GeminiStandIn.start(GeminiStandIn.Options.defaults().withApiKey("k")
            .withTick(Duration.ofMillis(100)).withWebhookUrl(hooks.url("/hook")).withWebhookSecret(secret))) {
      HttpResponse<String> created = send("POST",
          gemini.baseUrl() + "/v1beta/models/gemini-3.5-flash-lite:batchGenerateContent",
          "{\"batch\":{\"displayName\":\"tick\",\"inputConfig\":{\"requests\":{\"requests\":[{\"request\":{\"contents\":[{\"parts\":"
              + "[{\"text\":\"hi\"}]}]}}]}}}}",
          "x-goog-api-key", "k", "Content-Type", "application/json");
      assertEquals(200, created.statusCode(), created.body());
      String name = Json.parseTrusted(created.body()).get("name").asText();

      Receiver.Received hook = Await.value(Bounds.CALL,
          () -> hooks.receivedOn("/hook").stream().findFirst(), "the batch webhook");
      assertEquals(name, Json.parseTrusted(hook.text()).get("data").get("id").asText());
      assertTrue(WebhookSigner.fromSecret(secret)
          .verify(hook.header("webhook-id"), hook.header("webhook-timestamp"), hook.body(),
              hook.header("webhook-signature")));
      assertEquals(1, adminCounter(gemini, "batchGenerateContent"));
      Await.until(Bounds.CALL, () -> adminCounter(gemini, "webhook.delivered") == 1,
          "the webhook to be counted");
    }
  }
}
