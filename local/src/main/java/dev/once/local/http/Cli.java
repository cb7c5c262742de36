package dev.once.local.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line options of the form {@code --name value}, {@code --name=value} or a bare {@code --flag}; an
 * unknown option is an error, so a typo in the local runner fails loudly instead of being ignored.
 */
public final class Cli {
  private final Map<String, List<String>> values;

  private Cli(Map<String, List<String>> values) {
    this.values = values;
  }

  public static Cli parse(String[] args, Set<String> known) {
    Map<String, List<String>> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new IllegalArgumentException("unexpected argument: " + arg);
      }
      String name;
      String value;
      int eq = arg.indexOf('=');
      if (eq > 0) {
        name = arg.substring(2, eq);
        value = arg.substring(eq + 1);
      } else {
        name = arg.substring(2);
        boolean hasValue = i + 1 < args.length && !args[i + 1].startsWith("--");
        value = hasValue ? args[++i] : "true";
      }
      if (!known.contains(name)) {
        throw new IllegalArgumentException("unknown option --" + name + " (known: " + known + ")");
      }
      values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return new Cli(values);
  }

  public boolean has(String name) {
    return values.containsKey(name);
  }

  public String get(String name, String fallback) {
    List<String> all = values.get(name);
    return all == null ? fallback : all.get(all.size() - 1);
  }

  public List<String> all(String name) {
    return values.getOrDefault(name, List.of());
  }

  public int intValue(String name, int fallback) {
    String value = get(name, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " needs a whole number, got " + value);
    }
  }

  public long longValue(String name, long fallback) {
    String value = get(name, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " needs a whole number, got " + value);
    }
  }

  public boolean flag(String name) {
    return Boolean.parseBoolean(get(name, "false"));
  }

  public Duration duration(String name, Duration fallback) {
    String value = get(name, null);
    return value == null ? fallback : parseDuration(value);
  }

  /** {@code 250ms}, {@code 2s}, {@code 5m}, or ISO-8601 ({@code PT2S}). */
  public static Duration parseDuration(String text) {
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
