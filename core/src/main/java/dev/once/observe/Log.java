package dev.once.observe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where structured log lines go: one JSON object per line, the form Cloud Logging parses on Cloud Functions:
 * {@code severity} and {@code message} are recognised, other fields become the entry's jsonPayload,
 * {@code logging.googleapis.com/labels} become labels (which log-based metrics can group by), and
 * {@code logging.googleapis.com/trace} and {@code spanId} join the line to the current {@link Trace}.
 *
 * <p>{@link #stdout()} is what a function runs with; the guard is given another sink ({@link #to}) by a test that
 * reads or silences the lines, so no test changes a global.
 */
public final class Log {
  public static final String LABELS = "logging.googleapis.com/labels";
  public static final String TRACE = "logging.googleapis.com/trace";
  public static final String SPAN_ID = "logging.googleapis.com/spanId";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Log STDOUT = new Log(System.out, null);

  private final PrintStream out;
  /** GOOGLE_CLOUD_PROJECT, read on first use: Cloud Logging names a trace projects/P/traces/T. */
  private volatile Optional<String> project;

  private Log(PrintStream out, Optional<String> project) {
    this.out = out;
    this.project = project;
  }

  /** Lines on standard output, which Cloud Logging reads on Cloud Functions: the production sink. */
  public static Log stdout() {
    return STDOUT;
  }

  /** Lines on {@code stream} (a test's buffer, or a null stream to silence them). */
  public static Log to(PrintStream stream) {
    return new Log(stream, null);
  }

  /** The same sink, naming traces in {@code name} instead of GOOGLE_CLOUD_PROJECT (tests). */
  Log tracedIn(String name) {
    return new Log(out, Optional.ofNullable(name));
  }

  public void info(String message, Map<String, ?> fields) {
    write("INFO", message, fields);
  }

  public void error(String message, Map<String, ?> fields) {
    write("ERROR", message, fields);
  }

  public void write(String severity, String message, Map<String, ?> fields) {
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
      line = "{\"severity\":\"ERROR\",\"message\":\"unloggable entry: " + e.getOriginalMessage().replace('"', '\'')
          + "\"}";
    }
    synchronized (out) {
      out.println(line);
    }
  }

  private Optional<String> project() {
    Optional<String> known = project;
    if (known == null) {
      known = Settings.fromEnvironment().optional(OnceSetting.GOOGLE_CLOUD_PROJECT);
      project = known;
    }
    return known;
  }
}
