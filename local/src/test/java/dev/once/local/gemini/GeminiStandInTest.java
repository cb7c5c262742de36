package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.Content;
import com.google.genai.types.CountTokensResponse;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.File;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.InlinedResponse;
import com.google.genai.types.JobState;
import com.google.genai.types.ListBatchJobsConfig;
import com.google.genai.types.Part;
import com.google.genai.types.Schema;
import com.google.genai.types.Type;
import com.google.genai.types.UploadFileConfig;
import com.google.genai.types.WebhookConfig;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.http.Faults;
import dev.once.local.http.Receiver;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real google-genai SDK, pointed at the stand-in with HttpOptions.baseUrl. */
class GeminiStandInTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static final String SECRET = WebhookSigner.newSecret();
  private static GeminiStandIn standIn;
  private static Client client;
  private static Receiver receiver;

  @BeforeAll
  static void start() {
    standIn = GeminiStandIn.start(GeminiStandIn.Options.defaults().withApiKey("test-key").withWebhookSecret(SECRET)
        .withWebhookRetries(3, Duration.ofMillis(20)));
    client = client(HttpRetryOptions.builder().attempts(1).build());
    receiver = Receiver.start();
  }

  @AfterAll
  static void stop() {
    client.close();
    receiver.close();
    standIn.close();
  }

  static Client client(HttpRetryOptions retries) {
    return Client.builder().apiKey("test-key")
        .httpOptions(HttpOptions.builder().baseUrl(standIn.baseUrl()).timeout(30_000).retryOptions(retries).build())
        .build();
  }

  private static Schema documentSchema() {
    return Schema.builder().type(Type.Known.OBJECT)
        .properties(Map.of(
            "title", Schema.builder().type(Type.Known.STRING).build(),
            "pages", Schema.builder().type(Type.Known.INTEGER).minimum(1.0).maximum(500.0).build(),
            "category",
            Schema.builder().type(Type.Known.STRING).enum_(List.of("invoice", "letter", "contract")).build(),
            "confidence", Schema.builder().type(Type.Known.NUMBER).minimum(0.0).maximum(1.0).build(),
            "reviewed", Schema.builder().type(Type.Known.BOOLEAN).build(),
            "tags", Schema.builder().type(Type.Known.ARRAY).minItems(1L).maxItems(4L)
                .items(Schema.builder().type(Type.Known.STRING).build()).build(),
            "parties", Schema.builder().type(Type.Known.ARRAY)
                .items(Schema.builder().type(Type.Known.OBJECT).properties(Map.of(
                    "name", Schema.builder().type(Type.Known.STRING).build(),
                    "role", Schema.builder().type(Type.Known.STRING).enum_(List.of("buyer", "seller")).build()))
                    .required(List.of("name", "role")).build())
                .build()))
        .required(List.of("title", "pages", "category", "confidence", "reviewed", "tags", "parties"))
        .build();
  }

  private static void assertMatchesDocumentSchema(JsonNode json) {
    assertTrue(json.get("title").isTextual(), json.toString());
    long pages = json.get("pages").asLong();
    assertTrue(json.get("pages").isIntegralNumber() && pages >= 1 && pages <= 500, json.toString());
    assertTrue(Set.of("invoice", "letter", "contract").contains(json.get("category").asText()), json.toString());
    double confidence = json.get("confidence").asDouble();
    assertTrue(json.get("confidence").isNumber() && confidence >= 0 && confidence <= 1, json.toString());
    assertTrue(json.get("reviewed").isBoolean(), json.toString());
    assertTrue(json.get("tags").isArray() && json.get("tags").size() >= 1 && json.get("tags").size() <= 4);
    json.get("tags").forEach(tag -> assertTrue(tag.isTextual()));
    for (JsonNode party : json.get("parties")) {
      assertTrue(party.get("name").isTextual());
      assertTrue(Set.of("buyer", "seller").contains(party.get("role").asText()), json.toString());
    }
  }

  private static Content prompt(String text, byte[] pdf) {
    return pdf == null ? Content.fromParts(Part.fromText(text))
        : Content.fromParts(Part.fromText(text), Part.fromBytes(pdf, "application/pdf"));
  }

  @Test
  void generateContent_withResponseSchema_answersJsonThatFollowsIt_deterministically() {
    byte[] pdf = "%PDF-1.7 an invoice from ACME to Beta".getBytes(StandardCharsets.UTF_8);
    GenerateContentConfig config = GenerateContentConfig.builder().responseMimeType("application/json")
        .responseSchema(documentSchema()).build();

    GenerateContentResponse first = client.models.generateContent(MODEL, prompt("Analyse this document.", pdf), config);
    GenerateContentResponse again = client.models.generateContent(MODEL, prompt("Analyse this document.", pdf), config);
    GenerateContentResponse other = client.models.generateContent(MODEL, prompt("Analyse that document.", pdf), config);

    assertMatchesDocumentSchema(Json.parseTrusted(first.text()));
    assertMatchesDocumentSchema(Json.parseTrusted(other.text()));
    assertEquals(first.text(), again.text());
    assertNotEquals(first.text(), other.text());
  }

  @Test
  void generateContent_withJsonSchema_answersJsonThatFollowsIt() {
    Map<String, Object> schema = Map.of(
        "type", "object",
        "properties", Map.of(
            "summary", Map.of("type", "string", "maxLength", 40),
            "amount", Map.of("type", List.of("number", "null")),
            "lines", Map.of("type", "array", "minItems", 3, "items", Map.of("$ref", "#/$defs/line"))),
        "required", List.of("summary", "amount", "lines"),
        "$defs", Map.of("line", Map.of("type", "object", "properties",
            Map.of("sku", Map.of("type", "string", "format", "uuid"), "qty",
                Map.of("type", "integer", "minimum", 1)))));
    GenerateContentConfig config = GenerateContentConfig.builder().responseMimeType("application/json")
        .responseJsonSchema(schema).build();

    JsonNode json = Json.parseTrusted(client.models.generateContent(MODEL, "Summarise.", config).text());

    assertTrue(json.get("summary").isTextual() && json.get("summary").asText().length() <= 40, json.toString());
    assertTrue(json.get("amount").isNumber(), json.toString());
    assertTrue(json.get("lines").size() >= 3, json.toString());
    for (JsonNode line : json.get("lines")) {
      assertEquals(36, line.get("sku").asText().length(), json.toString());
      assertTrue(line.get("qty").asLong() >= 1, json.toString());
    }
  }

  @Test
  void generateContent_reportsUsageDerivedFromInputSize() {
    GenerateContentResponse small = client.models.generateContent(MODEL, "a short prompt", null);
    GenerateContentResponse large = client.models.generateContent(MODEL, "a much longer prompt ".repeat(50), null);
    GenerateContentResponse withPdf = client.models.generateContent(MODEL,
        prompt("a short prompt", new byte[120_000]), null);

    GenerateContentResponseUsageMetadata s = small.usageMetadata().orElseThrow();
    GenerateContentResponseUsageMetadata l = large.usageMetadata().orElseThrow();
    GenerateContentResponseUsageMetadata p = withPdf.usageMetadata().orElseThrow();
    assertTrue(s.promptTokenCount().orElseThrow() > 0);
    assertTrue(l.promptTokenCount().orElseThrow() > 10 * s.promptTokenCount().orElseThrow());
    assertTrue(p.promptTokenCount().orElseThrow() > s.promptTokenCount().orElseThrow() + 258);
    for (GenerateContentResponseUsageMetadata u : List.of(s, l, p)) {
      assertEquals(u.promptTokenCount().orElseThrow() + u.candidatesTokenCount().orElseThrow(),
          u.totalTokenCount().orElseThrow());
      assertTrue(u.candidatesTokenCount().orElseThrow() > 0);
    }
    assertNotNull(small.text());
  }

  @Test
  void countTokens_answersThePromptTokensGenerateContentReports_forTheSameContents_freeOfAnswer() {
    Content content = prompt("Extract the invoice in this document.", new byte[120_000]);
    long before = standIn.count("countTokens");
    CountTokensResponse counted = client.models.countTokens(MODEL, List.of(content), null);
    GenerateContentResponse generated = client.models.generateContent(MODEL, content, null);

    assertEquals(generated.usageMetadata().orElseThrow().promptTokenCount().orElseThrow(),
        counted.totalTokens().orElseThrow());
    assertEquals(before + 1, standIn.count("countTokens"));
    ClientException notAModel = assertThrows(ClientException.class,
        () -> client.models.countTokens("no-such-model", List.of(content), null));
    assertEquals(404, notAModel.code());
    ClientException empty = assertThrows(ClientException.class,
        () -> client.models.countTokens(MODEL, List.of(Content.builder().role("user").parts(List.of()).build()), null));
    assertEquals(400, empty.code());
  }

  @Test
  void maxOutputTokens_cutsTheAnswer_withFinishReasonMaxTokens() {
    GenerateContentConfig bounded = GenerateContentConfig.builder().maxOutputTokens(3).build();
    GenerateContentResponse cut = client.models.generateContent(MODEL, "a prompt whose answer is long", bounded);
    GenerateContentResponse whole = client.models.generateContent(MODEL, "a prompt whose answer is long",
        GenerateContentConfig.builder().maxOutputTokens(8192).build());

    assertEquals(3, cut.usageMetadata().orElseThrow().candidatesTokenCount().orElseThrow());
    assertEquals("MAX_TOKENS", cut.candidates().orElseThrow().get(0).finishReason().orElseThrow().toString());
    assertTrue(cut.text().length() <= 12, cut.text());
    assertEquals("STOP", whole.candidates().orElseThrow().get(0).finishReason().orElseThrow().toString());
  }

  @Test
  void everyCall_isCountedPerMethod() {
    long before = standIn.count("generateContent");
    client.models.generateContent(MODEL, "count me", null);
    client.models.generateContent(MODEL, "count me too", null);
    assertEquals(before + 2, standIn.count("generateContent"));
  }

  @AfterEach
  void defaultSignature() {
    standIn.dynamicSignature(DynamicSignature.V1A);
  }

  @Test
  void batch_createGetComplete_returnsInlinedResponsesWithMetadata_andSendsASignedWebhook() throws Exception {
    standIn.dynamicSignature(DynamicSignature.JWT); // Google's documented format; v1a is the default
    String hook = "/hook-" + System.nanoTime();
    BatchJob created = client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
        InlinedRequest.builder().contents(prompt("first document", null)).metadata(Map.of("key", "doc-1")).build(),
        InlinedRequest.builder().contents(prompt("second document", null)).metadata(Map.of("key", "doc-2"))
            .config(GenerateContentConfig.builder().responseMimeType("application/json")
                .responseSchema(documentSchema()).build())
            .build())
        .build(),
        CreateBatchJobConfig.builder().displayName("nightly")
            .webhookConfig(WebhookConfig.builder().uris(receiver.url(hook).toString())
                .userMetadata(Map.of("tenant", "t-7")).build())
            .build());

    String name = created.name().orElseThrow();
    assertTrue(name.startsWith("batches/"), name);
    assertEquals(JobState.Known.JOB_STATE_PENDING, created.state().orElseThrow().knownEnum());
    assertEquals("nightly", created.displayName().orElseThrow());
    assertEquals("models/" + MODEL, created.model().orElseThrow());

    standIn.advance();
    long endedGetsBefore = standIn.count("batches.get.ended");
    assertEquals(JobState.Known.JOB_STATE_RUNNING, client.batches.get(name, null).state().orElseThrow().knownEnum());
    assertEquals(endedGetsBefore, standIn.count("batches.get.ended"), "a running job's get is a status poll");
    assertTrue(receiver.receivedOn(hook).isEmpty(), "no webhook before the job ends");
    standIn.advance();

    BatchJob done = client.batches.get(name, null);
    assertEquals(JobState.Known.JOB_STATE_SUCCEEDED, done.state().orElseThrow().knownEnum());
    assertEquals(endedGetsBefore + 1, standIn.count("batches.get.ended"), "the ended job's get is counted as such");
    assertTrue(done.endTime().isPresent());
    List<InlinedResponse> responses = done.dest().orElseThrow().inlinedResponses().orElseThrow();
    assertEquals(2, responses.size());
    assertEquals("doc-1", responses.get(0).metadata().orElseThrow().get("key"));
    assertEquals("doc-2", responses.get(1).metadata().orElseThrow().get("key"));
    assertTrue(responses.get(0).response().orElseThrow().text().contains("first document"));
    assertMatchesDocumentSchema(Json.parseTrusted(responses.get(1).response().orElseThrow().text()));
    assertTrue(
        responses.get(1).response().orElseThrow().usageMetadata().orElseThrow().totalTokenCount().orElseThrow() > 0);

    Receiver.Received webhook = Await.value(Bounds.CALL,
        () -> receiver.receivedOn(hook).stream().findFirst(), "the batch.succeeded webhook");
    // The job named its own URI: a dynamic webhook, here signed with an RS256 JWT the stand-in's JWKS verifies.
    SignedJWT token = SignedJWT.parse(webhook.header("webhook-signature"));
    JWK key = JWKSet.load(standIn.jwksUrl().toURL()).getKeyByKeyId(token.getHeader().getKeyID());
    assertEquals(JWSAlgorithm.RS256, token.getHeader().getAlgorithm());
    assertTrue(token.verify(new RSASSAVerifier(key.toRSAKey())), "the JWT verifies with the served key");
    JWTClaimsSet claims = token.getJWTClaimsSet();
    assertEquals(DynamicWebhookSigner.ISSUER, claims.getIssuer());
    assertEquals(List.of(receiver.url(hook).toString()), claims.getAudience());
    assertEquals(webhook.header("webhook-id"), claims.getJWTID());
    assertEquals("batch.succeeded", claims.getStringClaim("type"), "the token carries the event");
    assertEquals(Json.parseTrusted(webhook.text()).get("data").get("id").asText(),
        String.valueOf(claims.getJSONObjectClaim("data").get("id")));
    assertTrue(claims.getExpirationTime().after(new Date()));
    assertFalse(WebhookSigner.fromSecret(SECRET).verify(webhook.header("webhook-id"),
        webhook.header("webhook-timestamp"), webhook.body(), webhook.header("webhook-signature")),
        "not signed with the static secret");
    assertTrue(Math.abs(Long.parseLong(webhook.header("webhook-timestamp")) - Instant.now().getEpochSecond()) < 60);
    JsonNode event = Json.parseTrusted(webhook.text());
    assertEquals("batch.succeeded", event.get("type").asText());
    assertEquals("v1", event.get("version").asText());
    assertEquals(name, event.get("data").get("id").asText());
    assertEquals("t-7", event.get("data").get("user_metadata").get("tenant").asText());
  }

  /** The only format live dynamic deliveries were reported to carry (googleapis/python-genai#2927). */
  @Test
  void aDynamicDelivery_isSignedV1aByDefault() throws Exception {
    try (Receiver hooks = Receiver.start(); GeminiStandIn fresh = GeminiStandIn.start();
        Client toFresh = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(fresh.baseUrl())
            .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      String job = toFresh.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("v1a", null)).build()).build(),
          CreateBatchJobConfig.builder().displayName("v1a").webhookConfig(WebhookConfig.builder()
              .uris(hooks.url("/own").toString()).build()).build())
          .name().orElseThrow();
      fresh.finish(job, null);

      Receiver.Received own = Await.value(Bounds.CALL,
          () -> hooks.receivedOn("/own").stream().findFirst(), "the dynamic delivery");
      String signature = own.header("webhook-signature");
      assertEquals(fresh.dynamicWebhookSigner().v1a(own.header("webhook-id"),
          Long.parseLong(own.header("webhook-timestamp")), own.body()), signature, "v1a over id.timestamp.body");
      assertTrue(signature.startsWith("v1a,"), signature);
    }
  }

  @Test
  void aJobsOwnUri_getsADynamicJwtDelivery_aRegisteredUrl_anHmacOne() throws Exception {
    try (Receiver hooks = Receiver.start();
        GeminiStandIn both = GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookSecret(SECRET)
            .withWebhookUrl(hooks.url("/registered")).withJobUrisReplaceGlobal(false));
        Client toBoth = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(both.baseUrl())
            .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      String job = toBoth.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("both", null)).build()).build(),
          CreateBatchJobConfig.builder().displayName("hooked").webhookConfig(WebhookConfig.builder()
              .uris(hooks.url("/own").toString()).build()).build())
          .name().orElseThrow();
      both.dynamicSignature(DynamicSignature.JWT);
      both.finish(job, null);

      Receiver.Received registered = Await.value(Bounds.CALL,
          () -> hooks.receivedOn("/registered").stream().findFirst(), "the static delivery");
      Receiver.Received own = Await.value(Bounds.CALL,
          () -> hooks.receivedOn("/own").stream().findFirst(), "the dynamic delivery");
      assertTrue(WebhookSigner.fromSecret(SECRET).verify(registered.header("webhook-id"),
          registered.header("webhook-timestamp"), registered.body(), registered.header("webhook-signature")));
      SignedJWT token = SignedJWT.parse(own.header("webhook-signature"));
      assertEquals(both.dynamicWebhookKeyId(), token.getHeader().getKeyID());
      assertTrue(token.verify(new RSASSAVerifier(JWKSet.load(both.jwksUrl().toURL())
          .getKeyByKeyId(both.dynamicWebhookKeyId()).toRSAKey())));
      assertEquals(List.of(hooks.url("/own").toString()), token.getJWTClaimsSet().getAudience());
      assertEquals(1, both.count("jwks.get"));
      Await.until(Bounds.CALL, () -> both.webhookDeliveries().size() == 2, "both recorded");
      assertEquals(Set.of(true, false),
          both.webhookDeliveries().stream().map(WebhookDelivery::dynamic).collect(Collectors.toSet()));
    }
  }

  /** Google's Batch API limit: 100 concurrent batch jobs per project; the 101st is refused 429 and makes nothing. */
  @Test
  void theHundredAndFirstConcurrentJob_isRefused429_untilOneEnds() {
    try (GeminiStandIn fresh = GeminiStandIn.start();
        Client toFresh = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(fresh.baseUrl())
            .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      BatchJobSource source = BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("one of many", null)).build()).build();
      CreateBatchJobConfig config = CreateBatchJobConfig.builder().displayName("one of many").build();
      List<String> running = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        running.add(toFresh.batches.create(MODEL, source, config).name().orElseThrow());
      }

      ClientException refused =
          assertThrows(ClientException.class, () -> toFresh.batches.create(MODEL, source, config));

      assertEquals(429, refused.code());
      assertEquals("RESOURCE_EXHAUSTED", refused.status());
      assertEquals(100, fresh.count("batchGenerateContent.carriedOut"), "the refused one made nothing");
      fresh.finish(running.get(0), BatchState.SUCCEEDED);
      toFresh.batches.create(MODEL, source, config);
      assertEquals(101, fresh.count("batchGenerateContent.carriedOut"), "an ended job frees its place");
    }
  }

  /** Batch API guide: inline requests keep "the total request size under 20MB"; beyond, an input file. */
  @Test
  void inlineRequestsOverTwentyMegabytes_areRefused_evenWhenTheBodyLimitIsRaised() {
    try (GeminiStandIn fresh = GeminiStandIn.start(GeminiStandIn.Options.defaults()
        .withMaxRequestBytes(64L * 1024 * 1024));
        Client toFresh = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(fresh.baseUrl())
            .timeout(60_000).retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      String half = "x".repeat(11 * 1024 * 1024);
      BatchJobSource tooLarge = BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt(half, null)).build(),
          InlinedRequest.builder().contents(prompt(half, null)).build()).build();
      CreateBatchJobConfig config = CreateBatchJobConfig.builder().displayName("too large").build();

      ClientException refused =
          assertThrows(ClientException.class, () -> toFresh.batches.create(MODEL, tooLarge, config));

      assertEquals(400, refused.code());
      assertEquals("INVALID_ARGUMENT", refused.status());
      assertTrue(refused.message().contains("payload size exceeds the limit: 20971520 bytes"), refused.message());
      assertEquals(0, fresh.count("batchGenerateContent.carriedOut"));
      BatchJobSource fits = BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt(half, null)).build()).build();
      toFresh.batches.create(MODEL, fits, config);
      assertEquals(1, fresh.count("batchGenerateContent.carriedOut"), "one 11 MB request fits");
    }
  }

  /** The cookbook: "the list API currently doesn't return inlined_responses"; batches.get does. */
  @Test
  void batchesList_showsNoInlinedResponses_whichOnlyGettingTheJobReturns() {
    String job = client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
        InlinedRequest.builder().contents(prompt("listed", null)).build()).build(),
        CreateBatchJobConfig.builder().displayName("listed").build()).name().orElseThrow();
    standIn.finish(job, BatchState.SUCCEEDED);

    BatchJob listed = StreamSupport.stream(
        client.batches.list(ListBatchJobsConfig.builder().pageSize(1000).build()).spliterator(), false)
        .filter(j -> j.name().orElseThrow().equals(job)).findFirst().orElseThrow();

    assertEquals(JobState.Known.JOB_STATE_SUCCEEDED, listed.state().orElseThrow().knownEnum());
    assertTrue(listed.dest().flatMap(d -> d.inlinedResponses()).isEmpty(), "listed: " + listed.dest());
    assertEquals(1, client.batches.get(job, null).dest().orElseThrow().inlinedResponses().orElseThrow().size());
  }

  @Test
  void batchesList_pagesWithPageSizeAndPageToken_oldestFirst_soNoCallerCanRelyOnNewestFirst() {
    List<String> mine = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      mine.add(client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("list " + i, null)).build()).build(),
          CreateBatchJobConfig.builder().displayName("list " + i).build()).name().orElseThrow());
    }
    long listsBefore = standIn.count("batches.list");

    var pager = client.batches.list(ListBatchJobsConfig.builder().pageSize(2).build());
    assertEquals(2, pager.size());
    List<String> seen = new ArrayList<>();
    pager.forEach(job -> seen.add(job.name().orElseThrow()));

    assertEquals(new HashSet<>(seen).size(), seen.size(), "no job listed twice");
    assertTrue(seen.containsAll(mine), seen + " contains " + mine);
    assertEquals(mine, seen.stream().filter(mine::contains).toList(), "oldest first: Google documents no order");
    assertEquals(listsBefore + (seen.size() + 1) / 2, standIn.count("batches.list"));
  }

  @Test
  void plannedOutcomes_andCancel_endJobsWithTheMatchingState_andAWebhookForEachEndButACancel() {
    String hook = "/outcomes-" + System.nanoTime();
    CreateBatchJobConfig config = CreateBatchJobConfig.builder().displayName("outcomes")
        .webhookConfig(WebhookConfig.builder().uris(receiver.url(hook).toString()).build()).build();
    BatchJobSource source = BatchJobSource.builder().inlinedRequests(
        InlinedRequest.builder().contents(prompt("x", null)).build()).build();
    String failed = client.batches.create(MODEL, source, config).name().orElseThrow();
    String expired = client.batches.create(MODEL, source, config).name().orElseThrow();
    String cancelled = client.batches.create(MODEL, source, config).name().orElseThrow();

    standIn.planOutcome(failed, BatchState.FAILED);
    standIn.finish(failed, null);
    standIn.finish(expired, BatchState.EXPIRED);
    client.batches.cancel(cancelled, null);

    assertEquals(JobState.Known.JOB_STATE_FAILED, client.batches.get(failed, null).state().orElseThrow().knownEnum());
    assertEquals(JobState.Known.JOB_STATE_EXPIRED, client.batches.get(expired, null).state().orElseThrow().knownEnum());
    assertEquals(JobState.Known.JOB_STATE_CANCELLED,
        client.batches.get(cancelled, null).state().orElseThrow().knownEnum());
    assertTrue(client.batches.get(failed, null).dest().isEmpty(), "a failed job has no output");
    Await.until(Bounds.CALL, () -> receiver.receivedOn(hook).size() == 2, "two webhooks");
    Set<String> types = new HashSet<>();
    receiver.receivedOn(hook).forEach(r -> types.add(Json.parseTrusted(r.text()).get("type").asText()));
    assertEquals(Set.of("batch.failed", "batch.expired"), types);
    // The webhooks reference's subscribed events have no batch.cancelled: the cancel, done before it answered, sent none.
    assertTrue(standIn.webhookDeliveries().stream().noneMatch(d -> d.batchName().equals(cancelled)),
        standIn.webhookDeliveries().toString());
    standIn.finish(expired, null); // an ended job is left alone: no second webhook
    assertEquals(2, receiver.receivedOn(hook).size());
  }

  @Test
  void webhookModes_doubleDelayOrSuppressTheDelivery() {
    String twiceSame = "/same-" + System.nanoTime();
    String twiceNew = "/new-" + System.nanoTime();
    String never = "/never-" + System.nanoTime();
    String late = "/late-" + System.nanoTime();
    // The late one ends last, so "not yet delivered" is checked right after it ended.
    Map<String, WebhookMode> modes = new LinkedHashMap<>();
    modes.put(twiceSame, WebhookMode.TWICE_SAME_ID);
    modes.put(twiceNew, WebhookMode.TWICE_NEW_IDS);
    modes.put(never, WebhookMode.NEVER);
    modes.put(late, WebhookMode.late(Duration.ofSeconds(1)));
    long suppressedBefore = standIn.count("webhook.suppressed");
    Instant lateEnded = null;
    for (var entry : modes.entrySet()) {
      String job = client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("mode", null)).build()).build(),
          CreateBatchJobConfig.builder().displayName("hooked").webhookConfig(WebhookConfig.builder()
              .uris(receiver.url(entry.getKey()).toString()).build()).build())
          .name().orElseThrow();
      standIn.webhookMode(job, entry.getValue());
      if (entry.getKey().equals(late)) {
        lateEnded = Instant.now();
      }
      standIn.finish(job, null);
    }

    Await.until(Duration.ofSeconds(60), () -> receiver.receivedOn(twiceSame).size() == 2
        && receiver.receivedOn(twiceNew).size() == 2 && receiver.receivedOn(late).size() == 1, "the deliveries");
    // The late delivery waited its second after the job ended: when it was sent, not when this thread got to look.
    Instant lateSent = standIn.webhookDeliveries().stream()
        .filter(d -> d.target().getPath().equals(late)).findFirst().orElseThrow().at();
    assertTrue(!lateSent.isBefore(lateEnded.plusSeconds(1)), "the late delivery waits: ended " + lateEnded
        + ", answered " + lateSent);
    List<Receiver.Received> same = receiver.receivedOn(twiceSame);
    List<Receiver.Received> fresh = receiver.receivedOn(twiceNew);
    assertEquals(same.get(0).header("webhook-id"), same.get(1).header("webhook-id"));
    assertEquals(same.get(0).text(), same.get(1).text());
    assertNotEquals(fresh.get(0).header("webhook-id"), fresh.get(1).header("webhook-id"));
    assertTrue(receiver.receivedOn(never).isEmpty());
    assertEquals(suppressedBefore + 1, standIn.count("webhook.suppressed"));
  }

  @Test
  void failingWebhookReceiver_getsRetriesWithTheSameId() {
    // Its own receiver: the scripted 503 must go to this delivery, not to a webhook of another test.
    try (Receiver flaky = Receiver.start()) {
      flaky.answerNext(503);
      String job = client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(prompt("retry", null)).build()).build(),
          CreateBatchJobConfig.builder().displayName("hooked").webhookConfig(WebhookConfig.builder()
              .uris(flaky.url("/hook").toString()).build()).build())
          .name().orElseThrow();
      standIn.finish(job, null);

      Await.until(Bounds.CALL, () -> flaky.receivedOn("/hook").size() == 2, "a retried webhook");
      assertEquals(flaky.received().get(0).header("webhook-id"), flaky.received().get(1).header("webhook-id"));
      Await.until(Bounds.CALL, () -> standIn.webhookDeliveries().stream()
          .anyMatch(d -> d.batchName().equals(job) && d.delivered() && d.attempt() == 2), "the recorded retry");
    }
  }

  @Test
  void fileBatch_readsAnUploadedJsonlFile_andWritesADownloadableResponsesFile(@TempDir Path dir) throws Exception {
    String jsonl = """
        {"key":"a","request":{"contents":[{"parts":[{"text":"file request a"}]}]}}
        {"key":"b","request":{"contents":[]}}
        """;
    File uploaded = client.files.upload(jsonl.getBytes(StandardCharsets.UTF_8),
        UploadFileConfig.builder().mimeType("application/jsonl").displayName("requests").build());
    String input = uploaded.name().orElseThrow();
    assertTrue(input.startsWith("files/"));

    String job = client.batches.create(MODEL, BatchJobSource.builder().fileName(input).build(),
        CreateBatchJobConfig.builder().displayName("from a file").build())
        .name().orElseThrow();
    standIn.completeAll();
    String output = client.batches.get(job, null).dest().orElseThrow().fileName().orElseThrow();
    Path downloaded = dir.resolve("out.jsonl");
    client.files.download(output, downloaded.toString(), null);

    List<String> lines = Files.readAllLines(downloaded);
    assertEquals(2, lines.size());
    JsonNode a = Json.parseTrusted(lines.get(0));
    JsonNode b = Json.parseTrusted(lines.get(1));
    assertEquals("a", a.get("key").asText());
    assertTrue(a.get("response").get("candidates").get(0).get("content").get("parts").get(0).get("text").asText()
        .contains("file request a"));
    assertEquals("b", b.get("key").asText());
    // A google.rpc.Status, as python-genai#1341 shows one: 3 INVALID_ARGUMENT, not the HTTP 400 a lone call would get.
    assertEquals(3, b.get("error").get("code").asInt(), "a request the API rejects fails alone");
  }

  @Test
  void injected429_reachesTheCaller_andInjected503IsRetriedByTheSdk() {
    standIn.failNext(1, 429);
    ClientException rateLimited = assertThrows(ClientException.class,
        () -> client.models.generateContent(MODEL, "busy?", null));
    assertEquals(429, rateLimited.code());
    assertEquals("RESOURCE_EXHAUSTED", rateLimited.status());

    long before = standIn.count("generateContent");
    try (Client retrying = client(HttpRetryOptions.builder().attempts(3).initialDelay(0.01).maxDelay(0.05).build())) {
      standIn.failNext(2, 503);
      assertNotNull(retrying.models.generateContent(MODEL, "overloaded?", null).text());
    }
    assertEquals(before + 3, standIn.count("generateContent"), "two failed attempts and one success, all counted");
  }

  @Test
  void injectedLatency_delaysCalls() {
    standIn.latency(Duration.ofMillis(250));
    try {
      long start = System.nanoTime();
      client.models.generateContent(MODEL, "slow", null);
      assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() >= 250);
    } finally {
      standIn.latency(Duration.ZERO);
    }
  }

  @Test
  void latencyOfOneOperation_delaysOnlyThatOperation() {
    Content content = Content.fromParts(Part.fromText("how long?"));
    long countTokensDelayed = standIn.count("countTokens.delayed");
    long generateDelayed = standIn.count("generateContent.delayed");
    standIn.latency("generateContent", Duration.ofSeconds(2));
    try {
      client.models.countTokens(MODEL, List.of(content), null);
      long counted = System.nanoTime();
      client.models.generateContent(MODEL, "slow", null);
      long generated = System.nanoTime();
      // What the stand-in delayed, not how long the client waited: an undelayed call can take seconds when busy.
      assertEquals(countTokensDelayed, standIn.count("countTokens.delayed"), "countTokens is not delayed");
      assertEquals(generateDelayed + 1, standIn.count("generateContent.delayed"), "generateContent is");
      assertTrue(Duration.ofNanos(generated - counted).toMillis() >= 2000, "by its latency");
    } finally {
      standIn.latency("generateContent", Duration.ZERO);
    }
    assertThrows(IllegalArgumentException.class, () -> standIn.latency("generate", Duration.ZERO));
  }

  @Test
  void latencyOfTheNextCall_holdsThatCallOnly() {
    long delayed = standIn.count("generateContent.delayed");
    standIn.latencyNext("generateContent", 1, Duration.ofSeconds(2));
    long start = System.nanoTime();
    client.models.generateContent(MODEL, "held", null);
    long held = System.nanoTime();
    assertEquals(delayed + 1, standIn.count("generateContent.delayed"), "the next call is held");
    assertTrue(Duration.ofNanos(held - start).toMillis() >= 2000, "for its latency");
    client.models.generateContent(MODEL, "after", null);
    assertEquals(delayed + 1, standIn.count("generateContent.delayed"), "the one after it is not");
    assertThrows(IllegalArgumentException.class, () -> standIn.latencyNext("generate", 1, Duration.ZERO));
  }

  @Test
  void aGate_holdsEveryCallOfItsOperation_untilTheTestReleasesIt() throws Exception {
    Faults.Gate gate = standIn.hold("generateContent");
    CompletableFuture<String> held = CompletableFuture.supplyAsync(
        () -> client.models.generateContent(MODEL, "held", null).text());
    try {
      Await.until(Duration.ofSeconds(60), () -> gate.arrived() == 1, "the call at the gate");
      client.models.countTokens(MODEL, List.of(Content.fromParts(Part.fromText("other operations pass"))), null);
      assertFalse(held.isDone(), "held until released, however long that takes");
    } finally {
      gate.release();
    }
    assertNotNull(held.get(60, TimeUnit.SECONDS));
    assertNotNull(client.models.generateContent(MODEL, "after the release", null).text(), "no later call is held");
    assertEquals(1, gate.arrived());
  }
}
