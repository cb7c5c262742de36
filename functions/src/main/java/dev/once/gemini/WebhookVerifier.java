package dev.once.gemini;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Verifies a static Gemini webhook (one registered for the project): Standard Webhooks' symmetric signature.
 * {@code webhook-signature} holds one or more blank-separated {@code v1,<base64 HMAC-SHA256>} of {@code
 * "<webhook-id>.<webhook-timestamp>.<raw body>"}, keyed with the base64 part of a {@code whsec_} secret, the
 * timestamp within {@link WebhookMessage#TOLERANCE} of now. Several secrets are accepted at once so a secret can be
 * rolled. Comparison is constant-time.
 */
public final class WebhookVerifier {
  private final SigningKeys keys;
  private final InstantSource clock;

  public WebhookVerifier(List<byte[]> keys, InstantSource clock) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("at least one webhook secret is needed");
    }
    this.keys = SigningKeys.of(keys);
    this.clock = clock;
  }

  /** From {@code GEMINI_WEBHOOK_SECRET}'s value: blank-separated {@code whsec_} secrets. */
  public static WebhookVerifier fromSecrets(String secrets) {
    return new WebhookVerifier(parseSecrets(secrets), InstantSource.system());
  }

  /** Blank-separated {@code whsec_<base64>} secrets. The message never repeats a secret. */
  static List<byte[]> parseSecrets(String text) {
    return SigningKeys.parse(GeminiSetting.GEMINI_WEBHOOK_SECRET, text).keys();
  }

  /** @param header a header by name, case-insensitive */
  public void verify(Function<String, Optional<String>> header, byte[] body) throws InvalidSignature {
    WebhookMessage message = WebhookMessage.read(header, clock.instant());
    String signatures =
        header.apply("webhook-signature").orElseThrow(() -> new InvalidSignature("no webhook-signature header"));
    if (signatures.strip().split("\\s+").length > SigningKeys.MAX_SIGNATURES) {
      throw new InvalidSignature("too many signatures");
    }
    if (!keys.verifies(signatures, message.signedPrefix(), body)) {
      throw new InvalidSignature("no v1 signature matches any configured secret");
    }
  }
}
