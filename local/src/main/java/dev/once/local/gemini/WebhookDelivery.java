package dev.once.local.gemini;

import java.net.URI;
import java.time.Instant;

/**
 * One webhook POST (or one suppressed by {@link WebhookMode.Never}): what was sent where, signed how ({@code
 * dynamic}: a job's own URI, RS256 JWT; else a registered URL, HMAC), and what came back. {@code status} is the
 * HTTP status, -1 for a transport failure, 0 when suppressed.
 */
public record WebhookDelivery(
    String webhookId, String eventType, String batchName, URI target, boolean dynamic, int attempt, int status,
    String body, Instant at) {

  public boolean delivered() {
    return status / 100 == 2;
  }
}
