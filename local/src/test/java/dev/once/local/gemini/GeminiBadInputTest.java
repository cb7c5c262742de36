package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import dev.once.local.http.RawHttp;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad requests get the API's own error shape {"error":{"code","message","status"}}, never a crash. */
class GeminiBadInputTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final String GENERATE = "/v1beta/models/gemini-3.5-flash-lite:generateContent";
  private static GeminiStandIn standIn;

  @BeforeAll
  static void start() {
    standIn = GeminiStandIn.start(GeminiStandIn.Options.defaults().withApiKey("right-key").withMaxRequestBytes(4096));
  }

  @AfterAll
  static void stop() {
    standIn.close();
  }

  private static HttpResponse<String> post(String path, String key, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(standIn.baseUrl() + path))
        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header("x-goog-api-key", key);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(standIn.baseUrl() + path)).timeout(Duration.ofSeconds(10))
        .header("x-goog-api-key", "right-key").build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode assertError(HttpResponse<String> response, int code, String status) {
    assertEquals(code, response.statusCode(), response.body());
    JsonNode error = Json.parseTrusted(response.body()).get("error");
    assertEquals(code, error.get("code").asInt());
    assertEquals(status, error.get("status").asText());
    assertTrue(error.get("message").isTextual() && !error.get("message").asText().isEmpty());
    assertTrue(!response.body().contains("Exception"), "no stack trace: " + response.body());
    return error;
  }

  private static final String VALID = "{\"contents\":[{\"parts\":[{\"text\":\"hi\"}]}]}";

  @Test
  void missingApiKey_is403_andAWrongOneIs400_butBothAreCounted() throws Exception {
    long before = standIn.count("generateContent");
    assertError(post(GENERATE, null, VALID), 403, "PERMISSION_DENIED");
    JsonNode wrong = assertError(post(GENERATE, "wrong-key", VALID), 400, "INVALID_ARGUMENT");
    assertEquals("API_KEY_INVALID", wrong.get("details").get(0).get("reason").asText());
    assertEquals(200, post(GENERATE + "?key=right-key", null, VALID).statusCode());
    assertEquals(before + 3, standIn.count("generateContent"));
  }

  @Test
  void theSdkWithAWrongKey_getsAClientException() {
    try (Client client = Client.builder().apiKey("wrong-key").httpOptions(HttpOptions.builder()
        .baseUrl(standIn.baseUrl()).retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      ClientException e = assertThrows(ClientException.class,
          () -> client.models.generateContent("gemini-3.5-flash-lite", "hi", null));
      assertEquals(400, e.code());
      assertEquals("INVALID_ARGUMENT", e.status());
    }
  }

  @Test
  void garbageJson_is400() throws Exception {
    assertError(post(GENERATE, "right-key", "{\"contents\": [ nope"), 400, "INVALID_ARGUMENT");
    assertError(post(GENERATE, "right-key", ""), 400, "INVALID_ARGUMENT");
    assertError(post(GENERATE, "right-key", "[1,2,3]"), 400, "INVALID_ARGUMENT");
  }

  @Test
  void invalidContents_are400_withTheFieldNamed() throws Exception {
    JsonNode empty = assertError(post(GENERATE, "right-key", "{\"contents\":[]}"), 400, "INVALID_ARGUMENT");
    assertTrue(empty.get("message").asText().contains("contents"));
    assertError(post(GENERATE, "right-key", "{\"contents\":[{\"parts\":[]}]}"), 400, "INVALID_ARGUMENT");
    assertError(post(GENERATE, "right-key", "{\"contents\":[{\"role\":\"system\",\"parts\":[{\"text\":\"x\"}]}]}"),
        400, "INVALID_ARGUMENT");
    JsonNode badBase64 = assertError(post(GENERATE, "right-key",
        "{\"contents\":[{\"parts\":[{\"inlineData\":{\"mimeType\":\"application/pdf\",\"data\":\"***\"}}]}]}"),
        400, "INVALID_ARGUMENT");
    assertTrue(badBase64.get("message").asText().contains("Base64 decoding failed"));
  }

  @Test
  void unknownPathsAndModels_are404() throws Exception {
    assertEquals("Method not found.", assertError(get("/v1beta/nothing/here"), 404, "NOT_FOUND")
        .get("message").asText());
    assertError(get("/v2/models/gemini-3.5-flash-lite:generateContent"), 404, "NOT_FOUND");
    assertError(post("/v1beta/models/gpt-4:generateContent", "right-key", VALID), 404, "NOT_FOUND");
    assertError(get("/v1beta/batches/does-not-exist"), 404, "NOT_FOUND");
  }

  @Test
  void oversizedBody_is400_payloadSizeExceeded() throws Exception {
    String big = "{\"contents\":[{\"parts\":[{\"text\":\"" + "x".repeat(10_000) + "\"}]}]}";
    JsonNode error = assertError(post(GENERATE, "right-key", big), 400, "INVALID_ARGUMENT");
    assertTrue(error.get("message").asText().contains("exceeds the limit"), error.toString());
  }

  @Test
  void badBatchRequests_are400() throws Exception {
    String batch = "/v1beta/models/gemini-3.5-flash-lite:batchGenerateContent";
    assertError(post(batch, "right-key", "{}"), 400, "INVALID_ARGUMENT");
    assertError(post(batch, "right-key", "{\"batch\":{\"displayName\":\"x\",\"inputConfig\":{}}}"), 400,
        "INVALID_ARGUMENT");
    // "Required. The user-defined name of this batch." (API reference)
    assertError(post(batch, "right-key", "{\"batch\":{\"inputConfig\":{\"requests\":{\"requests\":[{\"request\":"
        + VALID + "}]}}}}"), 400, "INVALID_ARGUMENT");
    assertError(post(batch, "right-key", "{\"batch\":{\"displayName\":\" \",\"inputConfig\":{\"requests\":"
        + "{\"requests\":[{\"request\":" + VALID + "}]}}}}"), 400, "INVALID_ARGUMENT");
    assertError(post(batch, "right-key",
        "{\"batch\":{\"displayName\":\"x\",\"inputConfig\":{\"requests\":{\"requests\":[{\"request\":" + VALID
            + "}]}},\"webhookConfig\":{\"uris\":[\"not a url\"]}}}"),
        400, "INVALID_ARGUMENT");
    assertError(get("/v1beta/batches?pageToken=%25%25%25"), 400, "INVALID_ARGUMENT");
    assertError(get("/v1beta/batches?pageSize=-1"), 400, "INVALID_ARGUMENT");
  }

  @Test
  void adminEndpoints_driveTheClockAndReportCounters() throws Exception {
    HttpResponse<String> created = post("/v1beta/models/gemini-3.5-flash-lite:batchGenerateContent", "right-key",
        "{\"batch\":{\"displayName\":\"admin\",\"inputConfig\":{\"requests\":{\"requests\":[{\"request\":" + VALID
            + "}]}}}}");
    String name = Json.parseTrusted(created.body()).get("name").asText();
    assertEquals("BATCH_STATE_PENDING", Json.parseTrusted(created.body()).get("metadata").get("state").asText());

    assertEquals(200, post("/_admin/complete?name=" + name + "&state=EXPIRED", null, "").statusCode());
    assertEquals(BatchState.EXPIRED, standIn.state(name));
    JsonNode counters = Json.parseTrusted(get("/_admin/counters").body());
    assertTrue(counters.get("batchGenerateContent").asLong() >= 1);
    assertError(post("/_admin/outcome?state=RUNNING", null, ""), 400, "INVALID_ARGUMENT");
    assertError(post("/_admin/webhook-mode?mode=sometimes", null, ""), 400, "INVALID_ARGUMENT");
    assertError(get("/_admin/unknown"), 404, "NOT_FOUND");
  }

  @Test
  void nonHttpGarbage_doesNotHurtTheServer() throws Exception {
    RawHttp.exchange(standIn.port(), "\u0016\u0003\u0001 definitely not http\r\n\r\n");
    assertEquals(200, post(GENERATE, "right-key", VALID).statusCode());
  }
}
