package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LogRendererTest {
  private static List<String> render(boolean function, String... lines) {
    LogRenderer renderer = new LogRenderer(function);
    List<String> out = new ArrayList<>();
    for (String line : lines) {
      renderer.render(line).ifPresent(out::add);
    }
    return out;
  }

  @Test
  void anEventLine_becomesOneReadableLine() {
    List<String> out = render(true,
        "{\"severity\":\"INFO\",\"message\":\"DocumentUploaded processed 3c9e2a0b4f1d8e77\","
            + "\"logging.googleapis.com/labels\":{\"function\":\"DocumentUploaded\",\"effect\":\"analyse\",\"outcome\":\"processed\"},"
            + "\"keyHash\":\"3c9e2a0b4f1d8e77\",\"effect\":\"analyse\",\"outcome\":\"processed\",\"attempts\":1,\"latencyMs\":812,"
            + "\"effects\":{\"analyse\":\"processed\",\"publish\":\"processed\"},\"eventId\":\"42\"}");
    assertEquals(List.of("analyse→processed, publish→processed  key 3c9e2a0b4f1d8e77  (1 attempt, 812 ms)"), out);
  }

  @Test
  void aRejectedEvent_saysWhy() {
    List<String> out = render(true, "{\"severity\":\"WARNING\",\"logging.googleapis.com/labels\":{\"effect\":\"none\","
        + "\"outcome\":\"rejected\"},\"key\":null,\"attempts\":0,\"latencyMs\":3,\"reason\":\"no bucket\"}");
    assertEquals(List.of("none→rejected  (no key)  (3 ms) — no bucket"), out);
  }

  @Test
  void theInvokersTraceForARedelivery_isDropped_otherFailuresTakeOneLine() {
    List<String> out = render(true,
        "SEVERE: Failed to execute dev.once.functions.DocumentUploaded",
        "dev.once.functions.Redeliver: gcs:inbox/a.pdf#1 is being processed by another delivery; redeliver later",
        "\tat dev.once.functions.DocumentUploaded.accept(DocumentUploaded.java:70)",
        "SEVERE: Failed to execute dev.once.functions.MessageDelivered",
        "java.lang.IllegalStateException: Firestore is unavailable",
        "\tat dev.once.functions.MessageDelivered.accept(MessageDelivered.java:50)",
        "Caused by: java.io.IOException: refused",
        "\t... 12 more");
    assertEquals(List.of("threw java.lang.IllegalStateException: Firestore is unavailable (the event is redelivered)"),
        out);
  }

  @Test
  void jvmNoticesAndStartupChatter_areDropped_warningsAreKept() {
    List<String> out = render(false,
        "READY storage http://127.0.0.1:9023",
        "WARNING: A terminally deprecated method in sun.misc.Unsafe has been called",
        "WARNING: sun.misc.Unsafe::arrayBaseOffset has been called by com.google.protobuf.UnsafeUtil",
        "SLF4J(W): No SLF4J providers were found.",
        "INFO: Started oejs.Server@74ad1f1f",
        "WARNING: eventarc relay gave up on event 7 for http://127.0.0.1:8081/ after 10 attempts");
    assertEquals(List.of("WARNING: eventarc relay gave up on event 7 for http://127.0.0.1:8081/ after 10 attempts"),
        out);
  }

  @Test
  void theNotificationEndpointsLine_andTheReconcilersSummary_areShort() {
    assertEquals(List.of("answered 200  gcs:inbox/a.pdf#1  (result analysed)"),
        render(false, "NOTIFIED 200 gcs:inbox/a.pdf#1 analysed"));
    List<String> summary =
        render(true, "{\"severity\":\"INFO\",\"message\":\"reconciliation run\",\"summary\":{\"seen\":2,"
            + "\"processed\":0,\"duplicate\":2,\"truncated\":false},\"function\":\"GeminiReconciler\"}");
    assertEquals(1, summary.size());
    assertTrue(summary.get(0).equals("reconciliation run: seen 2, duplicate 2"), summary.get(0));
    String idle = "{\"severity\":\"INFO\",\"message\":\"batch gauges\",\"function\":\"GeminiReconciler\",\"gauges\":"
        + "{\"queued\":0,\"gathered\":0,\"oldest_queued_seconds\":0,\"jobs_in_flight\":0,\"max_jobs_in_flight\":90}}";
    assertEquals(List.of(), render(true, idle), "nothing in batch mode: no line every run");
    assertEquals(List.of("batch gauges: queued 3, oldest_queued_seconds 12, jobs_in_flight 1"),
        render(true, idle.replace("\"queued\":0", "\"queued\":3").replace("\"oldest_queued_seconds\":0",
            "\"oldest_queued_seconds\":12").replace("\"jobs_in_flight\":0", "\"jobs_in_flight\":1")));
  }
}
