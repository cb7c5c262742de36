package dev.once.run;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line options of the form {@code --name value}, {@code --name=value} or a bare {@code --flag}; an unknown
 * option is an error, so a typo fails loudly instead of being ignored.
 */
final class Cli {
  private final Map<String, List<String>> values;

  private Cli(Map<String, List<String>> values) {
    this.values = values;
  }

  static Cli parse(String[] args, Set<String> known) {
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

  boolean has(String name) {
    return values.containsKey(name);
  }

  String get(String name, String fallback) {
    List<String> all = values.get(name);
    return all == null ? fallback : all.get(all.size() - 1);
  }

  boolean flag(String name) {
    return Boolean.parseBoolean(get(name, "false"));
  }
}
