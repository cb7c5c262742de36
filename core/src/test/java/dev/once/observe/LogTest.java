package dev.once.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one line an event logs, as Cloud Logging reads it: severity, labels, and the trace that joins its lines. */
class LogTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  private final Log log = Log.to(new PrintStream(out, true, StandardCharsets.UTF_8)).tracedIn("once-prod");

  private JsonNode line() throws Exception {
    return JSON.readTree(out.toString(StandardCharsets.UTF_8).lines().reduce((a, b) -> b).orElseThrow());
  }

  @Test
  void anEventLine_carriesItsLabels_severity_andTheTraceItCameWith() throws Exception {
    Optional<Trace> trace = Trace.fromTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    Trace.within(trace, () -> {
      EventLog.record(log, "DocumentUploaded", "gcs:b/a.pdf#1", "analyse", OutcomeLabel.PROCESSED, 1, 12, Map.of());
      return null;
    });
    JsonNode line = line();
    assertEquals("INFO", line.path("severity").asText());
    assertEquals("processed", line.path(Log.LABELS).path("outcome").asText());
    assertEquals("DocumentUploaded", line.path(Log.LABELS).path("function").asText());
    assertEquals("analyse", line.path(Log.LABELS).path("effect").asText());
    assertEquals("projects/once-prod/traces/4bf92f3577b34da6a3ce929d0e0e4736", line.path(Log.TRACE).asText());
    assertEquals("00f067aa0ba902b7", line.path(Log.SPAN_ID).asText());
  }

  @Test
  void aLineOutsideAnyTrace_hasNoTraceFields() throws Exception {
    EventLog.record(log, "MessageDelivered", "pubsub:1", "notify", OutcomeLabel.FAILED, 1, 3, Map.of("error", "boom"));
    JsonNode line = line();
    assertEquals("ERROR", line.path("severity").asText());
    assertFalse(line.has(Log.TRACE));
    assertFalse(line.has(Log.SPAN_ID));
  }

  @Test
  void traceContexts_areReadFromW3cAndGoogleHeaders_andCarriedOnAsW3c() {
    Trace w3c = Trace.fromTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").orElseThrow();
    assertEquals("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", w3c.traceparent());
    Trace google = Trace.fromCloudTraceContext("105445aa7843bc8bf206b12000100000/1;o=1").orElseThrow();
    assertEquals("105445aa7843bc8bf206b12000100000", google.traceId());
    assertEquals("0000000000000001", google.spanId());
    for (String bad : new String[] {"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7"}) {
      assertTrue(Trace.fromTraceparent(bad).isEmpty(), bad);
    }
  }
}
