package dev.once.gemini;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;

/**
 * The Standard Webhooks headers both signature schemes sign over ({@code v1,} HMAC of static webhooks, {@code v1a,}
 * Ed25519 of dynamic ones): a {@code webhook-id} and a {@code webhook-timestamp} within ±{@link #TOLERANCE} of now,
 * so a captured delivery cannot be replayed later (within the window, the idempotency ledger absorbs a replay). The
 * signed content is {@code "<webhook-id>.<webhook-timestamp>.<raw body>"}.
 */
record WebhookMessage(String id, String timestamp) {
  static final Duration TOLERANCE = Duration.ofMinutes(5);
  private static final int MAX_ID_CHARS = 256;

  /** Reads and checks both headers, or says which is missing, malformed, stale or from the future. */
  static WebhookMessage read(Function<String, Optional<String>> header, Instant now) throws InvalidSignature {
    String id = header.apply("webhook-id").orElseThrow(() -> new InvalidSignature("no webhook-id header"));
    String timestamp =
        header.apply("webhook-timestamp").orElseThrow(() -> new InvalidSignature("no webhook-timestamp header"));
    if (id.isBlank() || id.length() > MAX_ID_CHARS) {
      throw new InvalidSignature("webhook-id is empty or too long");
    }
    long seconds;
    try {
      seconds = Long.parseLong(timestamp.strip());
    } catch (NumberFormatException e) {
      throw new InvalidSignature("webhook-timestamp is not a number of seconds");
    }
    Instant sent = Instant.ofEpochSecond(Math.max(-1L << 40, Math.min(1L << 40, seconds)));
    if (sent.isBefore(now.minus(TOLERANCE))) {
      throw new InvalidSignature("webhook-timestamp is more than " + TOLERANCE.toMinutes() + " minutes old");
    }
    if (sent.isAfter(now.plus(TOLERANCE))) {
      throw new InvalidSignature("webhook-timestamp is more than " + TOLERANCE.toMinutes() + " minutes ahead");
    }
    return new WebhookMessage(id, timestamp);
  }

  /** {@code "<webhook-id>.<webhook-timestamp>."}: what the signature covers before the body. */
  byte[] signedPrefix() {
    return (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
  }
}
