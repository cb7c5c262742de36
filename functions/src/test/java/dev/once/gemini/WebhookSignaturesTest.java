package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.gemini.DynamicWebhookSigner;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.LocalServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which configuration checks a delivery: a {@code v1,} signature the static one, anything else the dynamic one. */
class WebhookSignaturesTest {
  private static final String AUDIENCE = "https://europe-west1-p.cloudfunctions.net/once-gemini-webhook";
  private static final byte[] BODY =
      "{\"type\":\"batch.succeeded\",\"data\":{\"id\":\"batches/abc\"}}".getBytes(StandardCharsets.UTF_8);
  private final String secret = WebhookSigner.newSecret();
  private final DynamicWebhookSigner google = DynamicWebhookSigner.generate();
  private final AtomicInteger jwksRequests = new AtomicInteger();
  private LocalServer jwks;

  @BeforeEach
  void serveJwks() {
    byte[] document = google.publicKeys().toString().getBytes(StandardCharsets.UTF_8);
    jwks = LocalServer.start(0, exchange -> {
      jwksRequests.incrementAndGet();
      exchange.sendResponseHeaders(200, document.length);
      exchange.getResponseBody().write(document);
      exchange.close();
    });
  }

  @AfterEach
  void stopJwks() {
    jwks.close();
  }

  private Optional<WebhookVerifier> staticWebhooks() {
    return Optional.of(WebhookVerifier.fromSecrets(secret));
  }

  private Optional<DynamicWebhookVerifier> dynamicWebhooks() {
    return Optional.of(new DynamicWebhookVerifier(DynamicWebhookVerifier.Options.forAudience(AUDIENCE)
        .withJwksUrl(URI.create(jwks.baseUrl() + "/.well-known/jwks.json"))));
  }

  private static Function<String, Optional<String>> headers(String id, long timestamp, String signature) {
    Map<String, String> headers = new HashMap<>(Map.of("webhook-id", id, "webhook-timestamp", "" + timestamp));
    headers.put("webhook-signature", signature);
    return name -> Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
  }

  private Function<String, Optional<String>> hmac() {
    long now = Instant.now().getEpochSecond();
    return headers("msg_1", now, WebhookSigner.fromSecret(secret).sign("msg_1", now, BODY));
  }

  private Function<String, Optional<String>> jwt() {
    Instant now = Instant.now();
    return headers("msg_2", now.getEpochSecond(), google.jwt(URI.create(AUDIENCE), "msg_2", now, BODY));
  }

  private Function<String, Optional<String>> v1a() {
    long now = Instant.now().getEpochSecond();
    return headers("msg_3", now, google.v1a("msg_3", now, BODY));
  }

  @Test
  void withBothConfigurations_eachSchemeGoesToItsOwn() throws Exception {
    WebhookSignatures both = new WebhookSignatures(staticWebhooks(), dynamicWebhooks());
    both.verify(hmac(), BODY);
    assertEquals(0, jwksRequests.get(), "an HMAC signature needs no key of Google's");
    both.verify(jwt(), BODY);
    both.verify(v1a(), BODY);
    assertEquals(1, jwksRequests.get());
  }

  @Test
  void withOneConfiguration_everyDeliveryIsCheckedByIt() {
    WebhookSignatures staticOnly = new WebhookSignatures(staticWebhooks(), Optional.empty());
    assertThrows(InvalidSignature.class, () -> staticOnly.verify(jwt(), BODY));
    assertThrows(InvalidSignature.class, () -> staticOnly.verify(v1a(), BODY));

    WebhookSignatures dynamicOnly = new WebhookSignatures(Optional.empty(), dynamicWebhooks());
    assertThrows(InvalidSignature.class, () -> dynamicOnly.verify(hmac(), BODY));
    assertEquals(0, jwksRequests.get(), "an HMAC signature is not a token: nothing to fetch");
  }

  @Test
  void aForgedV1SignatureBesideAValidToken_isCheckedAsStatic_andRefused() {
    WebhookSignatures both = new WebhookSignatures(staticWebhooks(), dynamicWebhooks());
    long now = Instant.now().getEpochSecond();
    String mixed = "v1,AAAA " + google.v1a("msg_4", now, BODY);
    assertThrows(InvalidSignature.class, () -> both.verify(headers("msg_4", now, mixed), BODY));
  }

  @Test
  void staticIsRecognisedByAnyV1Entry() {
    assertTrue(WebhookSignatures.isStatic(Optional.of("v1,abc")));
    assertTrue(WebhookSignatures.isStatic(Optional.of(" v2,x\tv1,abc ")));
    assertFalse(WebhookSignatures.isStatic(Optional.of("v1a,abc")));
    assertFalse(WebhookSignatures.isStatic(Optional.of("eyJhbGciOiJSUzI1NiJ9.e30.c2ln")));
    assertFalse(WebhookSignatures.isStatic(Optional.empty()));
    assertThrows(IllegalArgumentException.class, () -> new WebhookSignatures(Optional.empty(), Optional.empty()));
  }
}
