package dev.once.observe;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one structured line logged per event: which function, which key, what happened to which effect, after how
 * many attempts, how long it took. {@code function}, {@code effect} and {@code outcome} are log labels, which the
 * log-based metric counts (Terraform), so the duplicate and rejected shares can be watched.
 */
public final class EventLog {
  /** Outcomes beyond {@code Outcome.label()}: the event failed transiently and will be redelivered. */
  public static final String FAILED = "failed";

  private EventLog() {}

  public static void record(String function, String key, String effect, String outcome, int attempts,
      long latencyMs, Map<String, ?> details) {
    Map<String, Object> labels = new LinkedHashMap<>();
    labels.put("function", function);
    labels.put("effect", effect);
    labels.put("outcome", outcome);
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put(Log.LABELS, labels);
    entry.put("key", key);
    entry.put("effect", effect);
    entry.put("outcome", outcome);
    entry.put("attempts", attempts);
    entry.put("latencyMs", latencyMs);
    entry.putAll(details);
    Log.write(severity(outcome), function + " " + outcome + (key == null ? "" : " " + key), entry);
  }

  /** An event refused before any effect (malformed, or no key can be made of it): logged, then acknowledged. */
  public static void refused(String function, String reason, long startedNanos, String idName, String id) {
    record(function, null, "none", "rejected", 0, elapsedMs(startedNanos), Map.of("reason", reason, idName, id));
  }

  /** Milliseconds since {@code startedNanos} ({@link System#nanoTime()}). */
  public static long elapsedMs(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }

  static String severity(String outcome) {
    return switch (outcome) {
      case "processed", "duplicate", "in_flight" -> "INFO";
      case "rejected" -> "WARNING";
      default -> "ERROR";
    };
  }
}
