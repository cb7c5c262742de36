package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.InvalidSetting;
import dev.once.wire.gemini.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebhookVerifierTest {
  private static final long NOW = 1_790_000_000L;
  private static final byte[] BODY = "{\"type\":\"batch.succeeded\",\"data\":{\"id\":\"batches/abc\"}}"
      .getBytes(StandardCharsets.UTF_8);
  private final String secret = WebhookSigner.newSecret();
  private final WebhookSigner signer = WebhookSigner.fromSecret(secret);

  private static WebhookVerifier verifier(String secrets, long nowSeconds) {
    return new WebhookVerifier(WebhookVerifier.parseSecrets(secrets),
        InstantSource.fixed(Instant.ofEpochSecond(nowSeconds)));
  }

  private static Function<String, Optional<String>> headers(String id, String timestamp, String signature) {
    Map<String, String> map = new HashMap<>();
    if (id != null) {
      map.put("webhook-id", id);
    }
    if (timestamp != null) {
      map.put("webhook-timestamp", timestamp);
    }
    if (signature != null) {
      map.put("webhook-signature", signature);
    }
    return name -> Optional.ofNullable(map.get(name.toLowerCase(Locale.ROOT)));
  }

  @Test
  void standardWebhooksTestVector_verifies() {
    // The reference vector of the Standard Webhooks specification (github.com/standard-webhooks).
    WebhookVerifier verifier = verifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1614265330);
    assertDoesNotThrow(() -> verifier.verify(headers("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void signatureFromTheGeminiStandIn_verifies() {
    assertDoesNotThrow(() -> verifier(secret, NOW).verify(
        headers("msg_1", String.valueOf(NOW), signer.sign("msg_1", NOW, BODY)), BODY));
  }

  @Test
  void rotatedSecrets_bothVerify_andSeveralSignaturesAreAccepted() throws Exception {
    String next = WebhookSigner.newSecret();
    WebhookVerifier rolling = verifier(secret + "  " + next, NOW);
    rolling.verify(headers("m", String.valueOf(NOW), signer.sign("m", NOW, BODY)), BODY);
    rolling.verify(headers("m", String.valueOf(NOW), WebhookSigner.fromSecret(next).sign("m", NOW, BODY)), BODY);
    String both = "v1,AAAA " + WebhookSigner.fromSecret(next).sign("m", NOW, BODY) + " v2,ignored";
    verifier(next, NOW).verify(headers("m", String.valueOf(NOW), both), BODY);
  }

  @Test
  void forgedTamperedOrWronglyKeyedSignatures_areRefused() {
    WebhookVerifier verifier = verifier(secret, NOW);
    String good = signer.sign("m", NOW, BODY);
    byte[] tampered =
        "{\"type\":\"batch.succeeded\",\"data\":{\"id\":\"batches/xyz\"}}".getBytes(StandardCharsets.UTF_8);
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("m", String.valueOf(NOW), good), tampered));
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("other-id", String.valueOf(NOW), good), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("m", String.valueOf(NOW + 1), good), BODY));
    String foreign = WebhookSigner.fromSecret(WebhookSigner.newSecret()).sign("m", NOW, BODY);
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("m", String.valueOf(NOW), foreign), BODY));
    assertThrows(InvalidSignature.class,
        () -> verifier.verify(headers("m", String.valueOf(NOW), "v1,!!notbase64"), BODY));
    assertThrows(InvalidSignature.class,
        () -> verifier.verify(headers("m", String.valueOf(NOW), good.replace("v1,", "v2,")), BODY));
  }

  @Test
  void staleAndFutureTimestamps_areRefused_withinFiveMinutesAccepted() throws Exception {
    WebhookVerifier verifier = verifier(secret, NOW);
    for (long sent : new long[] {NOW - 301, NOW + 301, 0, -5, Long.MAX_VALUE}) {
      InvalidSignature e = assertThrows(InvalidSignature.class,
          () -> verifier.verify(headers("m", String.valueOf(sent), signer.sign("m", sent, BODY)), BODY));
      assertTrue(e.getMessage().contains("webhook-timestamp"), e.getMessage());
    }
    for (long sent : new long[] {NOW - 299, NOW + 299}) {
      verifier.verify(headers("m", String.valueOf(sent), signer.sign("m", sent, BODY)), BODY);
    }
    assertThrows(InvalidSignature.class,
        () -> verifier.verify(headers("m", "yesterday", signer.sign("m", NOW, BODY)), BODY));
  }

  @Test
  void missingHeaders_areRefused() {
    WebhookVerifier verifier = verifier(secret, NOW);
    String good = signer.sign("m", NOW, BODY);
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers(null, String.valueOf(NOW), good), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("m", null, good), BODY));
    assertThrows(InvalidSignature.class, () -> verifier.verify(headers("m", String.valueOf(NOW), null), BODY));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"secret", "whsec_", "whsec_!!!", "whsec_c2hvcnQ=", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw nope"})
  void badSecrets_failNamingTheVariable_withoutRepeatingTheSecret(String secrets) {
    InvalidSetting e = assertThrows(InvalidSetting.class, () -> WebhookVerifier.parseSecrets(secrets));
    assertTrue(e.getMessage().startsWith("GEMINI_WEBHOOK_SECRET"), e.getMessage());
    assertTrue(!e.getMessage().contains("MfKQ9r8G"), e.getMessage());
  }

  @Test
  void oneSecretParses() {
    assertTrue(WebhookVerifier.parseSecrets(" " + secret + "\n").size() == 1);
    assertTrue(WebhookVerifier.parseSecrets(secret + " " + WebhookSigner.newSecret()).size() == 2);
    assertThrows(IllegalArgumentException.class, () -> new WebhookVerifier(List.of(), InstantSource.system()));
  }
}
