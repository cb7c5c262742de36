package dev.once.observe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.internal.observe.Trace;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Structured log lines, one JSON object per line on stdout, the form Cloud Logging parses on Cloud Functions:
 * {@code severity} and {@code message} are recognised, other fields become the entry's jsonPayload,
 * {@code logging.googleapis.com/labels} become labels (which log-based metrics can group by), and
 * {@code logging.googleapis.com/trace} and {@code spanId} join the line to the current {@link Trace}.
 */
public final class Log {
  public static final String LABELS = "logging.googleapis.com/labels";
  public static final String TRACE = "logging.googleapis.com/trace";
  public static final String SPAN_ID = "logging.googleapis.com/spanId";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static volatile PrintStream out = System.out;
  /** GOOGLE_CLOUD_PROJECT, read once: Cloud Logging names a trace projects/P/traces/T. */
  private static volatile Optional<String> project;

  private Log() {}

  public static void info(String message, Map<String, ?> fields) {
    write("INFO", message, fields);
  }

  public static void error(String message, Map<String, ?> fields) {
    write("ERROR", message, fields);
  }

  public static void write(String severity, String message, Map<String, ?> fields) {
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("severity", severity);
    entry.put("message", message);
    Trace.current().ifPresent(trace -> {
      project().ifPresent(p -> entry.put(TRACE, "projects/" + p + "/traces/" + trace.traceId()));
      entry.put(SPAN_ID, trace.spanId());
    });
    entry.putAll(fields);
    String line;
    try {
      line = JSON.writeValueAsString(entry);
    } catch (JsonProcessingException e) {
      line = "{\"severity\":\"ERROR\",\"message\":\"unloggable entry: " + e.getOriginalMessage().replace('"', '\'') + "\"}";
    }
    PrintStream target = out;
    synchronized (target) {
      target.println(line);
    }
  }

  private static Optional<String> project() {
    Optional<String> known = project;
    if (known == null) {
      known = Settings.fromEnvironment().optional(OnceSetting.GOOGLE_CLOUD_PROJECT);
      project = known;
    }
    return known;
  }

  /** The project traces are named in, instead of GOOGLE_CLOUD_PROJECT (tests). */
  static void traceProject(String name) {
    project = Optional.ofNullable(name);
  }

  /** Tests capture log lines here. */
  public static void redirect(PrintStream stream) {
    out = stream;
  }
}
