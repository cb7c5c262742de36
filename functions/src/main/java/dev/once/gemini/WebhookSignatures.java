package dev.once.gemini;

import java.util.Arrays;
import java.util.Optional;
import java.util.function.Function;

/**
 * The webhook's two configurations, as Google offers them (Gemini API docs, "Webhooks"): static webhooks, registered
 * for the project and signed with a {@code whsec_} secret ({@code v1,<HMAC>}, {@link WebhookVerifier}), and dynamic
 * ones, named by each batch job's {@code webhook_config.uris} and signed with Google's keys ({@link
 * DynamicWebhookVerifier}). At least one is configured. With both, a delivery carrying a {@code v1,} signature is
 * checked as static and any other as dynamic; with one, every delivery is checked by it.
 */
public final class WebhookSignatures {
  private final Optional<WebhookVerifier> staticWebhooks;
  private final Optional<DynamicWebhookVerifier> dynamicWebhooks;

  public WebhookSignatures(Optional<WebhookVerifier> staticWebhooks, Optional<DynamicWebhookVerifier> dynamicWebhooks) {
    if (staticWebhooks.isEmpty() && dynamicWebhooks.isEmpty()) {
      throw new IllegalArgumentException("a webhook needs at least one of its two configurations");
    }
    this.staticWebhooks = staticWebhooks;
    this.dynamicWebhooks = dynamicWebhooks;
  }

  /**
   * @param header a request header by name, case-insensitive
   * @param body the raw request body, exactly as received
   * @return true when the delivery is bound to this webhook (a static one's secret is this project's; a dynamic
   *     token names this URL), false when its signature names no endpoint ({@code v1a})
   * @throws InvalidSignature the delivery must be refused (401)
   * @throws JwksUnavailable the keys of dynamic webhooks could not be fetched (503)
   */
  public boolean verify(Function<String, Optional<String>> header, byte[] body) throws InvalidSignature {
    if (dynamicWebhooks.isEmpty() || staticWebhooks.isPresent() && isStatic(header.apply("webhook-signature"))) {
      staticWebhooks.orElseThrow().verify(header, body);
      return true;
    }
    return dynamicWebhooks.orElseThrow().verify(header, body);
  }

  /** A {@code v1,} entry among the blank-separated signatures: Standard Webhooks' HMAC scheme. */
  static boolean isStatic(Optional<String> signatures) {
    return signatures
        .map(value -> Arrays.stream(value.strip().split("\\s+")).anyMatch(entry -> entry.startsWith("v1,")))
        .orElse(false);
  }
}
