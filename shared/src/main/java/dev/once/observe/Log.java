package dev.once.observe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Structured log lines, one JSON object per line on stdout, the form Cloud Logging parses on Cloud Functions:
 * {@code severity} and {@code message} are recognised, other fields become the entry's jsonPayload, and
 * {@code logging.googleapis.com/labels} become labels (which log-based metrics can group by).
 */
public final class Log {
  public static final String LABELS = "logging.googleapis.com/labels";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static volatile PrintStream out = System.out;

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

  /** Tests capture log lines here. */
  public static void redirect(PrintStream stream) {
    out = stream;
  }
}
