package dev.once.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns one part's raw log lines into the combined log's readable lines: one per structured event line of a function
 * ({@code analyse→processed  gcs:inbox/a.pdf#17  (1 attempt, 812 ms)}), warnings and errors of any part in one line,
 * and nothing for start-up chatter, JVM notices and stack traces (the part's own log file keeps those). Holds the
 * little state a two-line record needs, so use one per source.
 */
final class LogRenderer {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern JUL = Pattern.compile("^(SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST): (.*)$");
  private static final Pattern INVOKER_FAILURE = Pattern.compile("^Failed to execute (\\S+)");
  /** JVM and library notices that say nothing about the pipeline. */
  private static final List<String> NOISE = List.of("A terminally deprecated method", "sun.misc.Unsafe::",
      "Please consider reporting", "A restricted method", "java.lang.System::", "Use --enable-native-access",
      "Restricted methods will be blocked", "SLF4J");
  private static final int MAX_TEXT = 220;

  private final boolean function;
  /** The invoker logged that a function threw; the exception's first line comes next. */
  private boolean awaitingCause;

  LogRenderer(boolean function) {
    this.function = function;
  }

  Optional<String> render(String raw) {
    String line = raw.stripTrailing();
    if (line.isBlank()) {
      return Optional.empty();
    }
    if (line.startsWith("{")) {
      awaitingCause = false;
      return json(line);
    }
    if (Character.isWhitespace(line.charAt(0)) || line.startsWith("Caused by:") || line.startsWith("...")) {
      return Optional.empty(); // a stack trace: the part's log file has it
    }
    if (awaitingCause) {
      awaitingCause = false;
      // A function that throws asks for a redelivery; Redeliver is the expected one (an event in flight
      // elsewhere), already reported by the function's own in_flight line.
      return line.contains(".Redeliver:") ? Optional.empty()
          : Optional.of("threw " + compact(line) + " (the event is redelivered)");
    }
    Matcher jul = JUL.matcher(line);
    if (jul.matches()) {
      return julRecord(jul.group(1), jul.group(2));
    }
    if (isNoise(line)) {
      return Optional.empty();
    }
    if (line.startsWith("READY ")) {
      return Optional.empty(); // the table shows where each part listens
    }
    if (line.startsWith("NOTIFIED ")) {
      String[] parts = line.split(" ", 4);
      return Optional.of(parts.length < 4 ? compact(line)
          : "answered " + parts[1] + "  " + parts[2] + "  (result " + parts[3] + ")");
    }
    // The functions print only JSON and framework chatter; a stand-in's other output (an uncaught exception's
    // first line) matters.
    return function ? Optional.empty() : Optional.of(compact(line));
  }

  private Optional<String> julRecord(String level, String message) {
    if (isNoise(message)) {
      return Optional.empty();
    }
    Matcher failure = INVOKER_FAILURE.matcher(message);
    if (failure.find()) {
      awaitingCause = true;
      return Optional.empty();
    }
    if (level.equals("SEVERE") || level.equals("WARNING")) {
      return Optional.of(level + ": " + compact(message));
    }
    return Optional.empty();
  }

  private Optional<String> json(String line) {
    JsonNode entry;
    try {
      entry = JSON.readTree(line);
    } catch (Exception e) {
      return Optional.of(compact(line));
    }
    JsonNode labels = entry.path("logging.googleapis.com/labels");
    String outcome = labels.path("outcome").asText(entry.path("outcome").asText(""));
    if (!outcome.isEmpty()) {
      return Optional.of(event(entry, labels, outcome));
    }
    String severity = entry.path("severity").asText("INFO");
    StringBuilder text = new StringBuilder();
    if (!severity.equals("INFO")) {
      text.append(severity).append(": ");
    }
    text.append(entry.path("message").asText(""));
    // The reconciler's run summary, and its batch gauges (every run: shown only when batch mode holds something).
    JsonNode summary = entry.has("summary") ? entry.path("summary") : entry.path("gauges");
    if (summary.isObject()) {
      List<String> counts = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = summary.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> field = it.next();
        if (field.getValue().isNumber() && field.getValue().asLong() != 0 && !field.getKey().startsWith("max_")) {
          counts.add(field.getKey() + " " + field.getValue().asLong());
        }
      }
      if (counts.isEmpty() && entry.has("gauges")) {
        return Optional.empty();
      }
      text.append(": ").append(counts.isEmpty() ? "nothing listed" : String.join(", ", counts));
    }
    if (entry.hasNonNull("error")) {
      text.append(" — ").append(entry.get("error").asText());
    }
    return Optional.of(compact(text.toString()));
  }

  /**
   * {@code analyse→processed, publish→processed  key 3c9e2a0b4f1d8e77  (1 attempt, 812 ms)}: lines name a key by its
   * hash ({@code once inspect HASH} finds it), never by the key, whose object name may name a person.
   */
  private static String event(JsonNode entry, JsonNode labels, String outcome) {
    List<String> effects = new ArrayList<>();
    JsonNode all = entry.path("effects");
    if (all.isObject() && all.size() > 0) {
      all.fields().forEachRemaining(e -> effects.add(e.getKey() + "→" + e.getValue().asText()));
    } else {
      effects.add(labels.path("effect").asText(entry.path("effect").asText("?")) + "→" + outcome);
    }
    StringBuilder text = new StringBuilder(String.join(", ", effects));
    text.append("  ").append(entry.hasNonNull("keyHash") ? "key " + entry.get("keyHash").asText() : "(no key)");
    int attempts = entry.path("attempts").asInt(0);
    List<String> facts = new ArrayList<>();
    if (attempts > 0) {
      facts.add(attempts + (attempts == 1 ? " attempt" : " attempts"));
    }
    if (entry.has("latencyMs")) {
      facts.add(entry.get("latencyMs").asLong() + " ms");
    }
    if (!facts.isEmpty()) {
      text.append("  (").append(String.join(", ", facts)).append(')');
    }
    if (entry.hasNonNull("reason")) {
      text.append(" — ").append(entry.get("reason").asText());
    } else if (entry.hasNonNull("error")) {
      text.append(" — ").append(entry.get("error").asText());
    }
    return compact(text.toString());
  }

  private static boolean isNoise(String text) {
    for (String prefix : NOISE) {
      if (text.startsWith(prefix) || text.startsWith("WARNING: " + prefix)) {
        return true;
      }
    }
    return false;
  }

  /** One line (a message may hold newlines), at most {@value #MAX_TEXT} characters. */
  static String compact(String text) {
    String one = text.replaceAll("[\\r\\n\\t]+", " ").strip();
    return one.length() <= MAX_TEXT ? one : one.substring(0, MAX_TEXT - 1) + "…";
  }
}
