package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.Content;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.MediaResolution;
import com.google.genai.types.ModalityTokenCount;
import com.google.genai.types.Model;
import com.google.genai.types.Part;
import com.google.genai.types.ThinkingConfig;
import com.google.genai.types.ThinkingLevel;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The stand-in speaks December-2026 Gemini: its models' stages with Google's own refusals (the captured bodies of
 * {@link GeminiFixtures}), models.get, answers of routed models, thinking that counts against maxOutputTokens, PDF pages
 * by media resolution, sampling parameters ignored (or refused on request), and a clock a test sets.
 */
class GeminiStandInModelsTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static GeminiStandIn standIn;
  private static Client client;

  @BeforeAll
  static void start() {
    standIn = GeminiStandIn.start();
    client = Client.builder().apiKey("key").httpOptions(HttpOptions.builder().baseUrl(standIn.baseUrl())
        .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build();
  }

  @AfterAll
  static void stop() {
    client.close();
    standIn.close();
  }

  @AfterEach
  void asGoogleServesThem() {
    standIn.model("gemini-3.5-flash-lite", "served", null);
    standIn.strictSampling(false);
    standIn.thinkingTokens(0);
    standIn.clock(null);
  }

  private static HttpResponse<String> raw(String method, String path, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(standIn.baseUrl() + path)).timeout(Duration.ofSeconds(30))
        .header("x-goog-api-key", "key").header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static final String HI = "{\"contents\":[{\"parts\":[{\"text\":\"hi\"}]}]}";

  @Test
  void aShutDownModel_aModelClosedToNewProjects_andAnUnknownName_areRefusedInGooglesOwnWords() throws Exception {
    HttpResponse<String> shutDown = raw("POST", "/v1beta/models/gemini-2.0-flash:generateContent", HI);
    assertEquals(404, shutDown.statusCode());
    assertEquals(GeminiFixtures.json("error-404-adk-docs-pr1840.json"), Json.parseTrusted(shutDown.body()));

    HttpResponse<String> closed = raw("POST", "/v1beta/models/gemini-2.5-flash:generateContent", HI);
    assertEquals(404, closed.statusCode());
    assertEquals(GeminiFixtures.json("error-404-no-longer-available-new-users.json"), Json.parseTrusted(closed.body()));

    HttpResponse<String> unknown = raw("POST", "/v1beta/models/gemini-1.5-flash:generateContent", HI);
    assertEquals(GeminiFixtures.json("error-404-model-not-found-unknown-id.json"), Json.parseTrusted(unknown.body()));

    for (String method : List.of("countTokens", "batchGenerateContent")) {
      assertEquals(404, raw("POST", "/v1beta/models/gemini-2.0-flash:" + method, HI).statusCode(), method);
    }
    assertEquals(0, standIn.count("batchGenerateContent.carriedOut"), "no job made for a model Google does not serve");
  }

  @Test
  void modelsGet_answersTheModelsResource_evenClosedToNewProjects_butNotShutDown() throws Exception {
    JsonNode resource = Json.parseTrusted(raw("GET", "/v1/models/gemini-3.5-flash-lite", null).body());
    assertEquals(GeminiFixtures.json("models-get-gemini-3.5-flash-lite.json"), resource);
    Model model = client.models.get("gemini-3.8-flash", null);
    assertEquals("models/gemini-3.8-flash", model.name().orElseThrow());
    assertEquals(1_048_576, model.inputTokenLimit().orElseThrow());
    assertEquals(200, raw("GET", "/v1/models/gemini-2.5-flash", null).statusCode(), "listed, though not callable");
    HttpResponse<String> gone = raw("GET", "/v1/models/gemini-2.0-flash", null);
    assertEquals(404, gone.statusCode());
    assertEquals("Model is not found: models/gemini-2.0-flash for api version v1",
        Json.parseTrusted(gone.body()).at("/error/message").asText());
  }

  @Test
  void aRoutedModel_isAnsweredByItsSuccessor_whoseNameTheAnswerCarries() {
    GenerateContentResponse routed = client.models.generateContent("gemini-3.7-flash", "hi", null);
    assertEquals("gemini-3.8-flash", routed.modelVersion().orElseThrow());
    standIn.model("gemini-3.5-flash-lite", "routed", "gemini-3.6-flash");
    assertEquals("gemini-3.6-flash",
        client.models.generateContent("gemini-3.5-flash-lite", "hi", null).modelVersion().orElseThrow());
    standIn.model("gemini-3.5-flash-lite", "shut-down", null);
    ClientException e = assertThrows(ClientException.class,
        () -> client.models.generateContent("gemini-3.5-flash-lite", "hi", null));
    assertEquals(404, e.code());
    assertTrue(e.getMessage().contains("is no longer available"), e.getMessage());
  }

  @Test
  void thinking_isCountedAsOutput_byLevel_andMinimalIsRefusedWhereGoogleRefusesIt() {
    GenerateContentResponse medium = client.models.generateContent("gemini-3.8-flash", "hi", null);
    int thoughts = medium.usageMetadata().orElseThrow().thoughtsTokenCount().orElseThrow();
    assertTrue(thoughts >= 960, "3.8 Flash thinks at medium by default: " + thoughts);
    assertEquals(medium.usageMetadata().orElseThrow().totalTokenCount().orElseThrow(),
        medium.usageMetadata().orElseThrow().promptTokenCount().orElseThrow()
            + medium.usageMetadata().orElseThrow().candidatesTokenCount().orElseThrow() + thoughts,
        "the total counts the thoughts, as the captured answer does");
    GenerateContentResponse low = client.models.generateContent("gemini-3.8-flash", "hi", thinking("LOW"));
    assertTrue(low.usageMetadata().orElseThrow().thoughtsTokenCount().orElseThrow() < thoughts);
    ClientException minimal = assertThrows(ClientException.class,
        () -> client.models.generateContent("gemini-3.8-flash", "hi", thinking("MINIMAL")));
    assertEquals(400, minimal.code());
    assertTrue(minimal.getMessage().contains("'minimal' is not a supported thinking level for this model"),
        minimal.getMessage());
    assertTrue(client.models.generateContent("gemini-3.5-flash-lite", "hi", null).usageMetadata().orElseThrow()
        .thoughtsTokenCount().isEmpty(), "3.5 Flash-Lite thinks minimally by default: no thoughts counted");
  }

  @Test
  void anAnswerThatThinksPastMaxOutputTokens_comesBackMaxTokens_withItsTextCutOrNone() {
    standIn.thinkingTokens(100);
    GenerateContentResponse none = client.models.generateContent("gemini-3.5-flash-lite", "hi",
        GenerateContentConfig.builder().maxOutputTokens(50).build());
    assertEquals("MAX_TOKENS", none.candidates().orElseThrow().get(0).finishReason().orElseThrow().toString());
    assertEquals("", none.text() == null ? "" : none.text());
    assertTrue(none.usageMetadata().orElseThrow().candidatesTokenCount().isEmpty(), "a count of zero is left out");
    assertEquals(50, none.usageMetadata().orElseThrow().thoughtsTokenCount().orElseThrow());

    GenerateContentResponse cut = client.models.generateContent("gemini-3.5-flash-lite", "Write a long letter please",
        GenerateContentConfig.builder().maxOutputTokens(103).build());
    assertEquals("MAX_TOKENS", cut.candidates().orElseThrow().get(0).finishReason().orElseThrow().toString());
    assertEquals(3, cut.usageMetadata().orElseThrow().candidatesTokenCount().orElseThrow());
  }

  @Test
  void aPdfPage_is560TokensOnGemini3_byMediaResolution_and258OnGemini2() {
    Content twoPages = Content.fromParts(Part.fromBytes(InvoicePdf.of("P-2", 2), "application/pdf"));
    assertEquals(2 * 560, client.models.countTokens("gemini-3.8-flash", List.of(twoPages), null).totalTokens()
        .orElseThrow(), "the default: 560 a page");
    JsonNode request = Json.parseTrusted("{\"contents\":[" + twoPages.toJson() + "]}");
    assertEquals(2 * 258, ContentGenerator.validateAndCount(request, 2, null).get(ContentGenerator.Modality.DOCUMENT),
        "Gemini 2 counts 258 a page");
    GenerateContentResponse low = client.models.generateContent("gemini-3.8-flash", twoPages, GenerateContentConfig
        .builder().mediaResolution(new MediaResolution(MediaResolution.Known.MEDIA_RESOLUTION_LOW)).build());
    assertEquals(2 * 280, documentTokens(low.usageMetadata().orElseThrow().promptTokensDetails().orElseThrow()));
    GenerateContentResponse medium = client.models.generateContent("gemini-3.8-flash", twoPages, GenerateContentConfig
        .builder().mediaResolution(new MediaResolution(MediaResolution.Known.MEDIA_RESOLUTION_MEDIUM)).build());
    assertEquals(2 * 560, documentTokens(medium.usageMetadata().orElseThrow().promptTokensDetails().orElseThrow()));
    assertEquals(1, ContentGenerator.pages(InvoicePdf.of("P-1")));
    assertEquals(3, ContentGenerator.pages(InvoicePdf.of("P-3", 3)));
  }

  private static int documentTokens(List<ModalityTokenCount> details) {
    return details.stream().filter(d -> d.modality().orElseThrow().toString().equals("DOCUMENT"))
        .mapToInt(d -> d.tokenCount().orElseThrow()).sum();
  }

  @Test
  void samplingParameters_areIgnoredOnGemini3_orRefusedAsLaterModelsWill() {
    GenerateContentConfig sampled = GenerateContentConfig.builder().temperature(0f).topP(0.5f).build();
    assertEquals("gemini-3.8-flash",
        client.models.generateContent("gemini-3.8-flash", "hi", sampled).modelVersion().orElseThrow());
    standIn.strictSampling(true);
    ClientException refused = assertThrows(ClientException.class,
        () -> client.models.generateContent("gemini-3.8-flash", "hi", sampled));
    assertEquals(400, refused.code());
    assertEquals("INVALID_ARGUMENT", refused.status());
    client.models.generateContent("gemini-3.8-flash", "hi", null); // and without them, answered
  }

  @Test
  void aBatchJobsTimes_readTheClockATestSets_andItsAnswersNameTheModelThatAnswered() {
    standIn.clock(Instant.parse("2026-12-31T20:00:00Z"));
    BatchJob job = client.batches.create("gemini-3.7-flash", BatchJobSource.builder().inlinedRequests(
        InlinedRequest.builder().contents(Content.fromParts(Part.fromText("hi"))).build()).build(),
        CreateBatchJobConfig.builder().displayName("clock").build());
    String name = job.name().orElseThrow();
    assertTrue(job.createTime().orElseThrow().isBefore(Instant.parse("2026-12-31T20:05:00Z")), job.toString());
    assertFalse(job.createTime().orElseThrow().isBefore(Instant.parse("2026-12-31T20:00:00Z")), job.toString());
    standIn.clock(Instant.parse("2027-01-01T20:00:00Z"));
    standIn.finish(name, BatchState.SUCCEEDED);
    BatchJob ended = client.batches.get(name, null);
    assertFalse(ended.endTime().orElseThrow().isBefore(Instant.parse("2027-01-01T20:00:00Z")), ended.toString());
    assertEquals("gemini-3.8-flash", ended.dest().orElseThrow().inlinedResponses().orElseThrow().get(0).response()
        .orElseThrow().modelVersion().orElseThrow());
  }

  private static GenerateContentConfig thinking(String level) {
    return GenerateContentConfig.builder()
        .thinkingConfig(ThinkingConfig.builder().thinkingLevel(new ThinkingLevel(level)).build()).build();
  }
}
