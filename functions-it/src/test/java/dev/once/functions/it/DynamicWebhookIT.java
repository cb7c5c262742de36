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
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FreePort;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.DynamicSignature;
import dev.once.local.gemini.DynamicWebhookSigner;
import dev.once.local.gemini.WebhookDelivery;
import dev.once.local.gemini.WebhookMode;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.samples.InvoicePdf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Gemini's dynamic webhooks, as the deployment configures them by default: DocumentUploaded creates each batch job
 * with {@code webhook_config.uris} = the webhook function's URL (GEMINI_WEBHOOK_URL), the Gemini stand-in sends the
 * job's completion there signed with its own keys, and the webhook verifies it against the stand-in's JWKS
 * (GEMINI_WEBHOOK_JWKS_URL), under the real invoker. Then hostile tokens, each refused without a ledger write, and
 * keys that cannot be fetched, answered 503 so Gemini retries.
 */
class DynamicWebhookIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().batch().withDynamicWebhooks());
  }

  @Test
  void theJobNamesTheWebhook_andItsTokenSignedDeliveryTwicePlusTheReconciler_completeItOnce() throws Exception {
    long jobsBefore = stack.gemini.count("batchGenerateContent.carriedOut");
    stack.gemini.webhookMode(WebhookMode.TWICE_SAME_ID);
    String job;
    String key;
    try {
      Blob blob = stack.upload("dynamic/acme-0101.pdf", InvoicePdf.of("0101"), "application/pdf");
      key = key(blob);
      job = submitted(key);
      assertEquals(List.of(URI.create(stack.webhookUrl())), stack.gemini.webhookUris(job),
          "the job was created with the webhook's URL in webhook_config.uris");
      stack.gemini.finish(job, BatchState.SUCCEEDED);
      Await.until(DEADLINE, () -> deliveries(job).stream().filter(WebhookDelivery::delivered).count() == 2,
          "both deliveries answered");
    } finally {
      stack.gemini.webhookMode(WebhookMode.NORMAL);
    }
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the result notified");
    JsonNode summary = stack.reconcile();
    assertEquals(0, summary.path("processed").asInt(), "nothing left for the reconciler: " + summary);

    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - jobsBefore, "one batch job");
    List<WebhookDelivery> deliveries = deliveries(job);
    for (WebhookDelivery delivery : deliveries) {
      assertTrue(delivery.dynamic(), "sent to the job's own URI, signed as a dynamic webhook: " + delivery);
      assertEquals(URI.create(stack.webhookUrl()), delivery.target());
    }
    // Each of the two deliveries answered 200 once. Before it, at most attempts answered 503 and sent again: the
    // webhook's answer when it could not fetch the stand-in's keys within its 3 s (a loaded machine), as documented.
    assertEquals(2, deliveries.stream().filter(WebhookDelivery::delivered).count(), deliveries.toString());
    assertTrue(deliveries.stream().allMatch(d -> d.status() == 200 || d.status() == 503), deliveries.toString());
    // Each delivery was acknowledged (queued, or duplicate once the job was completed); BatchCompleted completed it once.
    List<String> answered = webhookOutcomes("gemini:" + job);
    assertEquals(2, answered.size(), answered.toString());
    assertTrue(answered.stream().allMatch(o -> o.equals("processed") || o.equals("duplicate")), answered.toString());
    assertEquals(1, EventLines.of(stack.function("BatchCompleted").log(), "BatchCompleted", "gemini:" + job, "complete",
        "processed").size(), "one completion");
    List<QueryDocumentSnapshot> completions = withKey(stack.documents("idempotency"), "gemini:" + job).stream()
        .filter(r -> "complete".equals(r.getString("effect"))).toList();
    assertEquals(1, completions.size(), "one completion record");
    assertEquals("DONE", completions.get(0).getString("state"));
    List<QueryDocumentSnapshot> analyses = withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size());
    assertEquals("analysed", analyses.get(0).getString("status"));
    assertEquals(1, withKey(stack.documents("billing"), key).size(), "one bill");
    assertEquals(1, attributed(stack.published(), key).size(), "one publication");
    assertEquals(1, stack.notifiedWith(key).size(), "one notification");
  }

  /**
   * The stand-in signs v1a by default (what live dynamic deliveries were reported to carry, python-genai issue 2927);
   * a delivery signed as Google's documentation shows, with a JWT, completes its job too.
   */
  @Test
  void aJwtSignedDelivery_completesItsJobOnce() {
    stack.gemini.dynamicSignature(DynamicSignature.JWT);
    try {
      Blob blob = stack.upload("dynamic/acme-0102.pdf", InvoicePdf.of("0102"), "application/pdf");
      String key = key(blob);
      String job = submitted(key);
      stack.gemini.finish(job, BatchState.SUCCEEDED);
      Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the result notified");
      List<Integer> statuses = deliveries(job).stream().map(WebhookDelivery::status).toList();
      assertEquals(200, statuses.get(statuses.size() - 1), statuses.toString());
      assertTrue(statuses.subList(0, statuses.size() - 1).stream().allMatch(status -> status == 503),
          "answered 200 once, any attempt before it 503 (the keys not fetched in time): " + statuses);
      assertEquals(List.of("processed"), webhookOutcomes("gemini:" + job));
      assertEquals(1, withKey(stack.documents("billing"), key).size(), "one bill");
    } finally {
      stack.gemini.dynamicSignature(DynamicSignature.V1A);
    }
  }

  @Test
  void hostileTokens_areRefused401_andWriteNothing_andAnUnknownKidFetchesTheKeysOnceMore() throws Exception {
    DynamicWebhookSigner google = stack.gemini.dynamicWebhookSigner();
    byte[] body = bytes("{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"batches/hostile\"}}");
    int recordsBefore = stack.ledgerRecords();
    long getsBefore = stack.gemini.count("batches.get");
    long logMark = Files.size(stack.function("GeminiWebhook").log());
    RSAKey forger = new RSAKeyGenerator(2048).keyID(google.keyId()).generate(); // the stand-in's kid, another key

    // First, so the webhook holds the keys whatever ran before: a known kid, a wrong key, nothing to fetch again.
    assertRefused(body, signed(forger, google.keyId(), claims(body, c -> {})));
    long fetches = stack.gemini.count("jwks.get");
    Instant now = Instant.now();
    assertRefused(body, google.jwt(claims(body, c -> c.issueTime(Date.from(now.minus(Duration.ofMinutes(10))))
        .expirationTime(Date.from(now.minus(Duration.ofMinutes(5)))))));
    assertRefused(body, google.jwt(claims(body, c -> c.audience("https://another-endpoint.example/"))));
    assertRefused(body, google.jwt(claims(body, c -> c.issuer("https://accounts.google.com"))));
    byte[] other = bytes(new String(body, StandardCharsets.UTF_8).replace("batches/hostile", "batches/other"));
    assertRefused(other, google.jwt(claims(body, c -> {}))); // a genuine token, for another body
    assertRefused(body, new PlainJWT(claims(body, c -> {})).serialize()); // alg none
    RSAKey published = google.publicKeys().getKeyByKeyId(google.keyId()).toRSAKey();
    for (byte[] secret : new byte[][] {published.toPublicKey().getEncoded(), bytes(published.toJSONString())}) {
      SignedJWT hs256 = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(google.keyId()).build(),
          claims(body, c -> {}));
      hs256.sign(new MACSigner(secret));
      assertRefused(body, hs256.serialize());
    }
    assertEquals(fetches, stack.gemini.count("jwks.get"), "none of these made the webhook fetch the keys");

    RSAKey stranger = new RSAKeyGenerator(2048).keyID("rotated-" + System.nanoTime()).generate();
    assertRefused(body, signed(stranger, stranger.getKeyID(), claims(body, c -> {})));
    assertEquals(fetches + 1, stack.gemini.count("jwks.get"), "an unknown kid: the keys fetched once more");
    assertRefused(body, signed(stranger, stranger.getKeyID() + "-too", claims(body, c -> {})));
    assertEquals(fetches + 1, stack.gemini.count("jwks.get"), "not again within the refetch interval");

    assertEquals(recordsBefore, stack.ledgerRecords(), "no ledger record");
    assertEquals(getsBefore, stack.gemini.count("batches.get"), "no Gemini call");
    List<String> outcomes = Await.value(DEADLINE, () -> {
      List<String> lines = outcomesSince(stack.function("GeminiWebhook").log(), logMark, null);
      return lines.size() >= 10 ? Optional.of(lines) : Optional.empty();
    }, "one log line per refused delivery");
    assertEquals(List.of("unauthenticated"), outcomes.stream().distinct().toList(), outcomes.toString());
    assertEquals(10, outcomes.size(), "ten hostile tokens");
  }

  @Test
  void keysThatCannotBeFetched_areAnswered503_neverAccepted_andWriteNothing() throws Exception {
    int port = FreePort.pick();
    String url = "http://127.0.0.1:" + port + "/";
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("GEMINI_WEBHOOK_URL", url);
    env.put("GEMINI_WEBHOOK_JWKS_URL", "http://127.0.0.1:" + FreePort.pick() + "/.well-known/jwks.json");
    try (FunctionProcess webhook = FunctionProcess.start(
        new FunctionProcess.Launch(Path.of(System.getProperty("once.invokerJar")),
            Path.of(System.getProperty("once.functionJar")), List.of("-XX:TieredStopAtLevel=1")),
        "dev.once.functions.GeminiWebhook", port, env, stack.logDir.resolve("GeminiWebhook-unreachable-jwks.log"))) {
      byte[] body = bytes("{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"batches/keys-away\"}}");
      int recordsBefore = stack.ledgerRecords();
      Instant now = Instant.now();
      String token = stack.gemini.dynamicWebhookSigner().jwt(URI.create(url), "msg_keys_away", now, body);
      for (int attempt = 0; attempt < 2; attempt++) { // as Gemini retries: the answer stays 503
        HttpResponse<String> response = post(URI.create(url), body, headers("msg_keys_away", now, token));
        assertEquals(503, response.statusCode(), response.body());
        assertEquals("unavailable", JSON.readTree(response.body()).path("status").asText());
        assertNoLeak(response);
      }
      assertEquals(recordsBefore, stack.ledgerRecords(), "no ledger record");
    }
  }

  private static String submitted(String key) {
    return Await.value(DEADLINE, () -> stack.byKey("analyses", key).stream()
        .map(a -> a.getString("job")).filter(Objects::nonNull).findFirst(), "a batch job for " + key);
  }

  private static List<WebhookDelivery> deliveries(String job) {
    return stack.gemini.webhookDeliveries().stream().filter(d -> d.batchName().equals(job)).toList();
  }

  /** The outcomes GeminiWebhook logged for {@code key}, in order. */
  private static List<String> webhookOutcomes(String key) {
    return outcomesSince(stack.function("GeminiWebhook").log(), 0, key);
  }

  /** Outcomes of GeminiWebhook's event lines after byte {@code from} of its log, for {@code key} (null: none). */
  private static List<String> outcomesSince(Path log, long from, String key) {
    try {
      byte[] all = Files.readAllBytes(log);
      List<String> outcomes = new ArrayList<>();
      for (String line : new String(all, (int) from, all.length - (int) from, StandardCharsets.UTF_8).split("\n")) {
        if (line.startsWith("{") && line.contains("\"outcome\"")) {
          JsonNode entry = JSON.readTree(line);
          if (entry.path("keyHash").isNull() == (key == null) && (key == null || EventLines.isAbout(entry, key))) {
            outcomes.add(entry.path("outcome").asText());
          }
        }
      }
      return outcomes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Valid claims for {@code body} at the stack's webhook, then {@code change}d. */
  private static JWTClaimsSet claims(byte[] body, Consumer<JWTClaimsSet.Builder> change) {
    Instant now = Instant.now();
    JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder().issuer(DynamicWebhookSigner.ISSUER)
        .audience(stack.webhookUrl()).issueTime(Date.from(now))
        .expirationTime(Date.from(now.plus(Duration.ofMinutes(5))))
        .jwtID("msg_hostile").claim(DynamicWebhookSigner.BODY_HASH_CLAIM, DynamicWebhookSigner.bodyHash(body));
    change.accept(claims);
    return claims.build();
  }

  private static String signed(RSAKey key, String kid, JWTClaimsSet claims) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(kid).build(), claims);
    jwt.sign(new RSASSASigner(key));
    return jwt.serialize();
  }

  private static Map<String, String> headers(String id, Instant sent, String signature) {
    return Map.of("webhook-id", id, "webhook-timestamp", Long.toString(sent.getEpochSecond()),
        "webhook-signature", signature, "content-type", "application/json");
  }

  private static void assertRefused(byte[] body, String token) {
    HttpResponse<String> response = stack.post("GeminiWebhook", body, headers("msg_hostile", Instant.now(), token));
    assertEquals(401, response.statusCode(), response.body());
    assertTrue(response.body().contains("\"status\":\"invalid_signature\""), response.body());
    assertNoLeak(response);
  }

  private static void assertNoLeak(HttpResponse<String> response) {
    for (String leak : List.of("Exception", "\tat ", "java.", "dev.once", "nimbus")) {
      assertFalse(response.body().contains(leak), "the answer leaks \"" + leak + "\": " + response.body());
    }
  }

  private static HttpResponse<String> post(URI url, byte[] body, Map<String, String> headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(Bounds.CALL)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    headers.forEach(request::header);
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
