package dev.once.local.gemini;

import java.util.Locale;

/** The states of a Gemini API batch job, with their wire names and the webhook event each terminal one sends. */
public enum BatchState {
  PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, EXPIRED;

  /** {@code BATCH_STATE_SUCCEEDED} etc., as {@code metadata.state} carries it. */
  public String wireName() {
    return "BATCH_STATE_" + name();
  }

  public boolean isTerminal() {
    return this != PENDING && this != RUNNING;
  }

  /**
   * Whether the end is announced by a webhook: every end but a cancellation. The Gemini API's webhooks reference
   * lists {@code batch.succeeded}, {@code batch.failed} and {@code batch.expired} as its subscribed events; the guide's
   * {@code batch.cancelled} is not among them, nor in google-genai's event enum, so a cancelled job is found by polling.
   */
  public boolean hasWebhookEvent() {
    return isTerminal() && this != CANCELLED;
  }

  /** {@code batch.succeeded}, {@code batch.failed} or {@code batch.expired}. */
  public String webhookType() {
    if (!hasWebhookEvent()) {
      throw new IllegalStateException(this + " sends no webhook");
    }
    return "batch." + name().toLowerCase(Locale.ROOT);
  }

  /** Accepts {@code FAILED}, {@code failed} or {@code BATCH_STATE_FAILED}. */
  public static BatchState parse(String text) {
    String t = text.trim().toUpperCase(Locale.ROOT);
    return valueOf(t.startsWith("BATCH_STATE_") ? t.substring("BATCH_STATE_".length()) : t);
  }
}
