package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.Content;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.Part;
import com.google.genai.types.WebhookConfig;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import dev.once.local.Await;
import dev.once.local.emulator.FreePort;
import dev.once.local.gemini.DynamicSignature;
import dev.once.local.gemini.DynamicWebhookSigner;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.gemini.WebhookMode;
import dev.once.local.http.Receiver;
import dev.once.wire.http.LocalServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The verifier against a JWKS served locally (the test signs whatever token it needs, hostile ones included) and
 * against the Gemini stand-in's own signed deliveries.
 */
class DynamicWebhookVerifierTest {
  /** A deadline, not a wait: the stand-in sends at once, but a loaded 2-core machine may take its time. */
  private static final Duration DELIVERED = Duration.ofMinutes(2);
  private static final String AUDIENCE = "https://webhook.example.run.app/";
  private static final byte[] BODY =
      "{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"batches/abc\"}}"
          .getBytes(StandardCharsets.UTF_8);
  private static RSAKey key;
  private static RSAKey otherKey;

  private final AtomicReference<String> jwks = new AtomicReference<>();
  private final AtomicInteger jwksStatus = new AtomicInteger(200);
  private final AtomicInteger jwksRequests = new AtomicInteger();
  private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now().truncatedTo(ChronoUnit.SECONDS));
  private LocalServer jwksServer;

  @BeforeAll
  static void keys() throws Exception {
    key = new RSAKeyGenerator(2048).keyID("k1").generate();
    otherKey = new RSAKeyGenerator(2048).keyID("k1").generate(); // same kid, different key: a forger's
  }

  @BeforeEach
  void serveJwks() {
    jwks.set(new JWKSet(key.toPublicJWK()).toString());
    jwksServer = LocalServer.start(0, exchange -> {
      jwksRequests.incrementAndGet();
      byte[] document = jwks.get().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(jwksStatus.get(), document.length);
      exchange.getResponseBody().write(document);
      exchange.close();
    });
  }

  @AfterEach
  void stopJwks() {
    jwksServer.close();
  }

  private DynamicWebhookVerifier verifier() {
    return verifier(URI.create(jwksServer.baseUrl() + "/.well-known/jwks.json"));
  }

  private DynamicWebhookVerifier verifier(URI jwksUrl) {
    return new DynamicWebhookVerifier(DynamicWebhookVerifier.Options.forAudience(AUDIENCE).withJwksUrl(jwksUrl)
        .withKeyCaching(Duration.ofHours(1), Duration.ofSeconds(30)), now::get);
  }

  private JWTClaimsSet.Builder validClaims(byte[] body) {
    Instant issued = now.get();
    return new JWTClaimsSet.Builder().issuer(DynamicWebhookVerifier.GOOGLE_ISSUER).audience(AUDIENCE)
        .issueTime(Date.from(issued)).expirationTime(Date.from(issued.plus(Duration.ofMinutes(5))))
        .jwtID("msg_1").claim("sha256", DynamicWebhookSigner.bodyHash(body));
  }

  private static String signed(RSAKey signingKey, String kid, JWTClaimsSet claims) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(kid).type(JOSEObjectType.JWT)
        .build(), claims);
    jwt.sign(new RSASSASigner(signingKey));
    return jwt.serialize();
  }

  private String token(Consumer<JWTClaimsSet.Builder> change) throws Exception {
    JWTClaimsSet.Builder claims = validClaims(BODY);
    change.accept(claims);
    return signed(key, "k1", claims.build());
  }

  private static Function<String, Optional<String>> headers(String signature) {
    Map<String, String> headers = Map.of("webhook-id", "msg_1", "webhook-timestamp",
        Long.toString(Instant.now().getEpochSecond()), "webhook-signature", signature);
    return name -> Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
  }

  private static void assertRefused(DynamicWebhookVerifier verifier, String token, byte[] body) {
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers(token), body));
  }

  @Test
  void aValidToken_passes_andTheKeysAreFetchedOnce() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    verifier.verify(headers(token(c -> {})), BODY);
    verifier.verify(headers(token(c -> c.jwtID("msg_2"))), BODY);
    assertEquals(1, jwksRequests.get());
    assertEquals(1, verifier.jwksFetches());
  }

  @Test
  void aTokenSignedWithAnotherKey_isRefused_withoutFetchingAgain() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    assertRefused(verifier, signed(otherKey, "k1", validClaims(BODY).build()), BODY);
    assertEquals(1, jwksRequests.get(), "the kid was known: nothing to fetch again");
  }

  @Test
  void anExpiredToken_isRefused_butALittleClockSkewIsNot() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    Instant past = now.get().minus(Duration.ofMinutes(20));
    assertRefused(verifier, token(c -> c.issueTime(Date.from(past))
        .expirationTime(Date.from(now.get().minus(Duration.ofMinutes(2))))), BODY);
    verifier.verify(headers(token(c -> c.issueTime(Date.from(past))
        .expirationTime(Date.from(now.get().minus(Duration.ofSeconds(30)))))), BODY);
  }

  @Test
  void aTokenForAnotherAudience_isRefused() throws Exception {
    assertRefused(verifier(), token(c -> c.audience("https://someone-else.example/")), BODY);
    assertRefused(verifier(), token(c -> c.audience((String) null)), BODY);
  }

  @Test
  void aGenuineTokenRefusedForItsClaims_saysWhatItNames_aForgedOneDoesNot() throws Exception {
    InvalidSignature genuine = assertThrows(InvalidSignature.class, () -> verifier().verify(
        headers(token(c -> c.audience("https://europe-west1-p.cloudfunctions.net/hook/"))), BODY));
    assertTrue(genuine.getMessage().contains("aud [https://europe-west1-p.cloudfunctions.net/hook/]")
        && genuine.getMessage().contains("iss " + DynamicWebhookVerifier.GOOGLE_ISSUER), genuine.getMessage());
    InvalidSignature forged = assertThrows(InvalidSignature.class, () -> verifier().verify(headers(
        signed(otherKey, "k1", validClaims(BODY).audience("https://forged.example/").build())), BODY));
    assertTrue(!forged.getMessage().contains("forged.example"), forged.getMessage());
  }

  @Test
  void aTokenFromAnotherIssuer_isRefused() throws Exception {
    assertRefused(verifier(), token(c -> c.issuer("https://accounts.google.com")), BODY);
    assertRefused(verifier(), token(c -> c.issuer(null)), BODY);
  }

  @Test
  void aTamperedBody_isRefused_andATokenWithoutBodyHashToo() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    String token = token(c -> {});
    byte[] tampered = new String(BODY, StandardCharsets.UTF_8).replace("batches/abc", "batches/xyz")
        .getBytes(StandardCharsets.UTF_8);
    assertRefused(verifier, token, tampered);
    assertRefused(verifier, token(c -> c.claim("sha256", null)), BODY);
    assertRefused(verifier, token(c -> c.claim("sha256", 42)), BODY);
    verifier.verify(headers(token), BODY);
  }

  /** As Google documents it: the token carries the event (no body hash); what the pipeline acts on must match. */
  @Test
  void aTokenCarryingTheEvent_isBoundToItsTypeAndJob_andIatIsOptional() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    Map<String, Object> event = new com.fasterxml.jackson.databind.ObjectMapper().readValue(BODY,
        new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() {});
    Consumer<JWTClaimsSet.Builder> carryingTheEvent = c -> {
      c.claim("sha256", null).issueTime(null);
      event.forEach(c::claim);
    };
    verifier.verify(headers(token(carryingTheEvent)), BODY);

    byte[] anotherJob = new String(BODY, StandardCharsets.UTF_8).replace("batches/abc", "batches/xyz")
        .getBytes(StandardCharsets.UTF_8);
    assertRefused(verifier, token(carryingTheEvent), anotherJob);
    byte[] anotherType = new String(BODY, StandardCharsets.UTF_8).replace("batch.succeeded", "batch.failed")
        .getBytes(StandardCharsets.UTF_8);
    assertRefused(verifier, token(carryingTheEvent), anotherType);
    assertRefused(verifier, token(carryingTheEvent), "not json".getBytes(StandardCharsets.UTF_8));
    assertRefused(verifier, token(c -> c.claim("sha256", null)), BODY); // bound to nothing
  }

  @Test
  void anUnknownKid_fetchesTheKeysAgainOnce_thenIsRefused() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    verifier.verify(headers(token(c -> {})), BODY);
    assertEquals(1, jwksRequests.get());

    assertRefused(verifier, signed(otherKey, "unknown", validClaims(BODY).build()), BODY);
    assertEquals(2, jwksRequests.get(), "exactly one fetch more");
    assertRefused(verifier, signed(otherKey, "unknown-too", validClaims(BODY).build()), BODY);
    assertEquals(2, jwksRequests.get(), "no second fetch within the refetch interval");

    now.set(now.get().plus(Duration.ofSeconds(31)));
    assertRefused(verifier, signed(otherKey, "unknown", validClaims(BODY).build()), BODY);
    assertEquals(3, jwksRequests.get(), "one fetch per interval, not per forged token");
  }

  @Test
  void aRotatedKey_isFoundByTheOneFetchAgain() throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    verifier.verify(headers(token(c -> {})), BODY);
    RSAKey rotated = new RSAKeyGenerator(2048).keyID("k2").generate();
    jwks.set(new JWKSet(List.of(key.toPublicJWK(), rotated.toPublicJWK())).toString());

    verifier.verify(headers(signed(rotated, "k2", validClaims(BODY).build())), BODY);
    assertEquals(2, jwksRequests.get());
  }

  @Test
  void keysOlderThanTheirMaxAge_areFetchedAgain_andAnUnreachableJwksThenRefusesRatherThanUsingThem()
      throws Exception {
    DynamicWebhookVerifier verifier = verifier();
    verifier.verify(headers(token(c -> {})), BODY);
    now.set(now.get().plus(Duration.ofMinutes(61)));
    verifier.verify(headers(token(c -> {})), BODY);
    assertEquals(2, jwksRequests.get());

    now.set(now.get().plus(Duration.ofMinutes(61)));
    jwksStatus.set(503);
    String token = token(c -> {});
    assertThrows(JwksUnavailable.class, () -> verifier.verify(headers(token), BODY));
  }

  @Test
  void algNone_isRefused() throws Exception {
    String unsigned = new PlainJWT(validClaims(BODY).build()).serialize();
    assertRefused(verifier(), unsigned, BODY);
    // The same claims under a header that says "none" but carries a signature part.
    String[] parts = token(c -> {}).split("\\.");
    String noneHeader = Base64.getUrlEncoder().withoutPadding()
        .encodeToString("{\"alg\":\"none\",\"kid\":\"k1\"}".getBytes(StandardCharsets.UTF_8));
    assertRefused(verifier(), noneHeader + "." + parts[1] + "." + parts[2], BODY);
  }

  @Test
  void hs256KeyedWithThePublicKey_isRefused() throws Exception {
    for (byte[] secret : new byte[][] {key.toPublicKey().getEncoded(),
        key.toPublicJWK().toJSONString().getBytes(StandardCharsets.UTF_8)}) {
      SignedJWT forged = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("k1").build(),
          validClaims(BODY).build());
      forged.sign(new MACSigner(secret));
      assertRefused(verifier(), forged.serialize(), BODY);
    }
  }

  @Test
  void otherAlgorithms_andMalformedValues_areRefused() throws Exception {
    RSAKey ps = new RSAKeyGenerator(2048).keyID("k1").generate();
    SignedJWT pss = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.PS256).keyID("k1").build(),
        validClaims(BODY).build());
    pss.sign(new RSASSASigner(ps));
    assertRefused(verifier(), pss.serialize(), BODY);
    assertRefused(verifier(), "v1,c2lnbmF0dXJl", BODY); // a static (HMAC) signature is not a token
    assertRefused(verifier(), "not.a.jwt", BODY);
    assertRefused(verifier(), "x".repeat(20_000), BODY);
    assertThrows(InvalidSignature.class, () -> verifier().verify(name -> Optional.empty(), BODY));
  }

  @Test
  void aTokenIssuedInTheFuture_isRefused() throws Exception {
    Instant later = now.get().plus(Duration.ofMinutes(10));
    assertRefused(verifier(), token(c -> c.issueTime(Date.from(later))
        .expirationTime(Date.from(later.plus(Duration.ofMinutes(5))))), BODY);
  }

  @Test
  void anUnreachableOrBrokenJwks_isUnavailable_neverAPass() throws Exception {
    String token = token(c -> {});
    DynamicWebhookVerifier nothingListens =
        verifier(URI.create("http://127.0.0.1:" + FreePort.pick() + "/.well-known/jwks.json"));
    assertThrows(JwksUnavailable.class, () -> nothingListens.verify(headers(token), BODY));

    jwksStatus.set(500);
    assertThrows(JwksUnavailable.class, () -> verifier().verify(headers(token), BODY));
    jwksStatus.set(200);
    jwks.set("<html>maintenance</html>");
    assertThrows(JwksUnavailable.class, () -> verifier().verify(headers(token), BODY));
    jwks.set("{\"keys\":[" + (key.toPublicJWK().toJSONString() + ",").repeat(20) + key.toPublicJWK().toJSONString()
        + "]}");
    assertThrows(JwksUnavailable.class, () -> verifier().verify(headers(token), BODY), "21 keys: too many");
  }

  private static Function<String, Optional<String>> v1aHeaders(String id, long timestamp, String signature) {
    Map<String, String> headers = Map.of("webhook-id", id, "webhook-timestamp", Long.toString(timestamp),
        "webhook-signature", signature);
    return name -> Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
  }

  @Test
  void v1a_anEd25519SignatureOfIdTimestampAndBody_passes_andEveryAlterationIsRefused() throws Exception {
    DynamicWebhookSigner google = DynamicWebhookSigner.generate();
    jwks.set(google.publicKeys().toString());
    DynamicWebhookVerifier verifier = verifier();
    long sent = now.get().getEpochSecond();
    String signature = google.v1a("msg_7", sent, BODY);

    verifier.verify(v1aHeaders("msg_7", sent, signature), BODY);
    verifier.verify(v1aHeaders("msg_7", sent, "v1a,bm90LWl0 " + signature), BODY); // any entry may match

    byte[] tampered = new String(BODY, StandardCharsets.UTF_8).replace("abc", "abd").getBytes(StandardCharsets.UTF_8);
    assertThrows(InvalidSignature.class, () -> verifier.verify(v1aHeaders("msg_7", sent, signature), tampered));
    assertThrows(InvalidSignature.class, () -> verifier.verify(v1aHeaders("msg_8", sent, signature), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(v1aHeaders("msg_7", sent + 1, signature), BODY));
    long stale = sent - Duration.ofMinutes(6).toSeconds();
    assertThrows(InvalidSignature.class,
        () -> verifier.verify(v1aHeaders("msg_7", stale, google.v1a("msg_7", stale, BODY)), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(name -> name.equals("webhook-signature")
        ? Optional.of(signature) : Optional.empty(), BODY));
  }

  /**
   * A v1a signature names no endpoint, so the verifier says it is unbound (the webhook then accepts it only for a job
   * of its own), while a token is bound by its aud. And one request costs at most 8 Ed25519 checks, across the keys'
   * refetch: four entries (Google signs with one key, two while rotating), then refused without more work.
   */
  @Test
  void v1a_isReportedUnbound_andOneRequestCostsAtMostEightChecks() throws Exception {
    DynamicWebhookSigner google = DynamicWebhookSigner.generate();
    List<com.nimbusds.jose.jwk.JWK> keys = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      keys.addAll(DynamicWebhookSigner.generate().publicKeys().getKeys());
    }
    keys.addAll(google.publicKeys().getKeys());
    jwks.set(new JWKSet(keys).toString());
    DynamicWebhookVerifier verifier = verifier();
    long sent = now.get().getEpochSecond();
    String real = google.v1a("msg_1", sent, BODY);

    assertEquals(false, verifier.verify(v1aHeaders("msg_1", sent, real), BODY), "v1a: bound to no endpoint");
    String others = DynamicWebhookSigner.generate().v1a("msg_1", sent, BODY) + " "
        + DynamicWebhookSigner.generate().v1a("msg_1", sent, BODY) + " "
        + DynamicWebhookSigner.generate().v1a("msg_1", sent, BODY);
    InvalidSignature costly = assertThrows(InvalidSignature.class,
        () -> verifier.verify(v1aHeaders("msg_1", sent, others + " " + real), BODY), "4 entries x 4 keys = 16 checks");
    assertTrue(costly.getMessage().contains("more than 8 signature checks"), costly.getMessage());
    InvalidSignature many = assertThrows(InvalidSignature.class,
        () -> verifier.verify(v1aHeaders("msg_1", sent, others + " " + others), BODY));
    assertEquals("too many signatures", many.getMessage());
  }

  @Test
  void v1a_signedWithAnotherKey_isRefused_afterOneFetchAgain() throws Exception {
    DynamicWebhookSigner google = DynamicWebhookSigner.generate();
    jwks.set(google.publicKeys().toString());
    DynamicWebhookVerifier verifier = verifier();
    long sent = now.get().getEpochSecond();
    verifier.verify(v1aHeaders("msg_1", sent, google.v1a("msg_1", sent, BODY)), BODY);
    String forged = DynamicWebhookSigner.generate().v1a("msg_1", sent, BODY);

    assertThrows(InvalidSignature.class, () -> verifier.verify(v1aHeaders("msg_1", sent, forged), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(v1aHeaders("msg_1", sent, forged), BODY));
    assertEquals(2, jwksRequests.get(), "one fetch for the keys, one more for the unknown signer, then none");
  }

  @Test
  void aDeliveryTheGeminiStandInSigned_verifies_andItsBodyCannotBeSwapped() throws Exception {
    try (Receiver hooks = Receiver.start();
        GeminiStandIn gemini =
            GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookMode(WebhookMode.NORMAL));
        Client client = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(gemini.baseUrl())
            .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build()) {
      gemini.dynamicSignature(DynamicSignature.JWT); // the format Google documents first
      String webhookUrl = hooks.url("/gemini-webhook").toString();
      String job = client.batches.create("gemini-3.5-flash-lite", BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(Content.fromParts(Part.fromText("invoice"))).build()).build(),
          CreateBatchJobConfig.builder().displayName("once-doc").webhookConfig(WebhookConfig.builder()
              .uris(webhookUrl).userMetadata(Map.of("document_key", "k-1")).build()).build())
          .name().orElseThrow();
      gemini.finish(job, null);
      Receiver.Received delivery = Await.value(DELIVERED,
          () -> hooks.receivedOn("/gemini-webhook").stream().findFirst(), "the dynamic delivery");
      Function<String, Optional<String>> header = name -> Optional.ofNullable(delivery.header(name));

      DynamicWebhookVerifier verifier = new DynamicWebhookVerifier(
          DynamicWebhookVerifier.Options.forAudience(webhookUrl).withJwksUrl(gemini.jwksUrl()));
      verifier.verify(header, delivery.body());
      assertEquals(1, gemini.count("jwks.get"));

      byte[] swapped = delivery.text().replace(job, "batches/someone-elses").getBytes(StandardCharsets.UTF_8);
      assertThrows(InvalidSignature.class, () -> verifier.verify(header, swapped));
      DynamicWebhookVerifier elsewhere = new DynamicWebhookVerifier(DynamicWebhookVerifier.Options
          .forAudience("https://another-endpoint.example/").withJwksUrl(gemini.jwksUrl()));
      assertThrows(InvalidSignature.class, () -> elsewhere.verify(header, delivery.body()),
          "a delivery captured at another endpoint does not pass here");
      assertTrue(delivery.text().contains("\"user_metadata\":{\"document_key\":\"k-1\"}"), delivery.text());

      gemini.dynamicSignature(DynamicSignature.V1A);
      String second = client.batches.create("gemini-3.5-flash-lite", BatchJobSource.builder().inlinedRequests(
          InlinedRequest.builder().contents(Content.fromParts(Part.fromText("invoice 2"))).build()).build(),
          CreateBatchJobConfig.builder().displayName("once-doc-2")
              .webhookConfig(WebhookConfig.builder().uris(webhookUrl)
                  .build())
              .build())
          .name().orElseThrow();
      gemini.finish(second, null);
      Receiver.Received v1a = Await.value(DELIVERED, () -> hooks.receivedOn("/gemini-webhook").stream()
          .filter(r -> r.text().contains(second)).findFirst(), "the v1a delivery");
      assertTrue(v1a.header("webhook-signature").startsWith("v1a,"), v1a.header("webhook-signature"));
      verifier.verify(name -> Optional.ofNullable(v1a.header(name)), v1a.body());
    }
  }
}
