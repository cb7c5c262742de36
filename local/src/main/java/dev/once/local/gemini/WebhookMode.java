package dev.once.local.gemini;

import dev.once.local.http.Durations;
import java.time.Duration;
import java.util.Locale;

/** How the stand-in delivers a job's webhook: the ways the real one can surprise a receiver. */
public sealed interface WebhookMode {
  /** Once per URL, retried with the same webhook-id until a 2xx or the attempt limit. */
  record Normal() implements WebhookMode {}

  /** Delivered, then delivered again with the same webhook-id (a sender that retried after a lost answer). */
  record TwiceSameId() implements WebhookMode {}

  /** Two deliveries with different webhook-ids for the same event. */
  record TwiceNewIds() implements WebhookMode {}

  /** Delivered only after {@code delay}. */
  record Late(Duration delay) implements WebhookMode {}

  /** Never delivered (the reconciliation poller has to find the job). */
  record Never() implements WebhookMode {}

  WebhookMode NORMAL = new Normal();
  WebhookMode TWICE_SAME_ID = new TwiceSameId();
  WebhookMode TWICE_NEW_IDS = new TwiceNewIds();
  WebhookMode NEVER = new Never();

  static WebhookMode late(Duration delay) {
    return new Late(delay);
  }

  /** {@code normal}, {@code twice}, {@code twice-new-ids}, {@code never}, {@code late:2s}. */
  static WebhookMode parse(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("late:")) {
      return late(Durations.parse(t.substring("late:".length())));
    }
    return switch (t) {
      case "normal" -> NORMAL;
      case "twice", "twice-same-id" -> TWICE_SAME_ID;
      case "twice-new-ids" -> TWICE_NEW_IDS;
      case "never" -> NEVER;
      default -> throw new IllegalArgumentException(
          "webhook mode is normal, twice, twice-new-ids, never or late:<duration>, not " + text);
    };
  }
}
