package dev.once.local.http;

import java.time.Duration;

/** Durations as people type them in admin calls and fault specs: {@code 250ms}, {@code 2s}, {@code 5m}, ISO-8601. */
public final class Durations {
  private Durations() {}

  /** {@code 250ms}, {@code 2s}, {@code 5m}, a bare number of milliseconds, or ISO-8601 ({@code PT2S}). */
  public static Duration parse(String text) {
    String t = text.trim();
    try {
      if (t.startsWith("P") || t.startsWith("p")) {
        return Duration.parse(t);
      }
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      }
      if (t.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.ofMillis(Long.parseLong(t));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a duration: " + text + " (use 250ms, 2s, 5m or PT2S)");
    }
  }
}
