package dev.once.observe;

import dev.once.key.IdempotencyKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one structured line logged per event: which function, which key, what happened to which effect, after how
 * many attempts, how long it took. The key appears as its {@code keyHash} ({@link IdempotencyKey#logHash}), never
 * as itself: keys hold object names, which may name people. {@code function}, {@code effect} and {@code outcome} are
 * log labels, which the log-based metric counts (Terraform), so the duplicate and rejected shares can be watched.
 */
public final class EventLog {
  private EventLog() {}

  public static void record(Log log, String function, String key, String effect, OutcomeLabel outcome, int attempts,
      long latencyMs, Map<String, ?> details) {
    Map<String, Object> labels = new LinkedHashMap<>();
    labels.put("function", function);
    labels.put("effect", effect);
    labels.put("outcome", outcome.label());
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put(Log.LABELS, labels);
    String keyHash = key == null ? null : IdempotencyKey.logHash(key);
    entry.put("keyHash", keyHash);
    entry.put("effect", effect);
    entry.put("outcome", outcome.label());
    entry.put("attempts", attempts);
    entry.put("latencyMs", latencyMs);
    entry.putAll(details);
    log.write(outcome.severity(), function + " " + outcome.label() + (key == null ? "" : " " + keyHash), entry);
  }

  /** An event refused before any effect (malformed, or no key can be made of it): logged, then acknowledged. */
  public static void refused(Log log, String function, String reason, long startedNanos, String idName, String id) {
    record(log, function, null, "none", OutcomeLabel.REJECTED, 0, elapsedMs(startedNanos),
        Map.of("reason", reason, idName, id));
  }

  /** Milliseconds since {@code startedNanos} ({@link System#nanoTime()}). */
  public static long elapsedMs(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }

}
