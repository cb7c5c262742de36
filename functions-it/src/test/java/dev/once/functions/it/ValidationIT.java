package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.samples.InvoicePdf;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Documents refused before any paid call, generations read as the event names them, and malformed events that
 * are acknowledged without a trace in the ledger.
 */
class ValidationIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().withReconciler());
  }

  private static QueryDocumentSnapshot analysisOnceNotified(String key) {
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the result of " + key + " notified");
    List<QueryDocumentSnapshot> analyses = withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size());
    return analyses.get(0);
  }

  private static void assertRejectedOnce(String key, String reasonPart) throws Exception {
    QueryDocumentSnapshot analysis = analysisOnceNotified(key);
    assertEquals("rejected", analysis.getString("status"));
    assertTrue(analysis.getString("reason").contains(reasonPart), analysis.getString("reason"));
    assertTrue(withKey(stack.documents("billing"), key).isEmpty(), "nothing billed");
    assertEquals(1, attributed(stack.published(), key).size(), "the refusal is published once");
    assertEquals("rejected",
        JSON.readTree(stack.notifiedWith(key).get(0).body()).path("result").path("status").asText());
  }

  @Test
  void wrongContentType_isRejectedOnce_withoutAGeminiCall() throws Exception {
    long calls = stack.gemini.count("generateContent");
    stack.storage.notifyTwice(true);
    Blob blob;
    try {
      blob = stack.upload("bad/notes.txt", "just text".getBytes(StandardCharsets.UTF_8), "text/plain");
    } finally {
      stack.storage.notifyTwice(false);
    }
    assertRejectedOnce(key(blob), "text/plain");
    Await.until(DEADLINE, stack::relayIdle, "the doubled notification handled");
    assertEquals(calls, stack.gemini.count("generateContent"), "no Gemini call");
  }

  @Test
  void emptyDocument_isRejectedOnce() throws Exception {
    Blob blob = stack.upload("bad/empty.pdf", new byte[0], "application/pdf");
    assertRejectedOnce(key(blob), "empty");
  }

  @Test
  void overwrittenObject_isReadAtTheGenerationEachEventNames() throws Exception {
    // Both generations exist before either event is handled: with the function down, the relay holds them.
    stack.pause("DocumentUploaded");
    Blob first;
    Blob second;
    try {
      first = stack.upload("overwrite/invoice.pdf", InvoicePdf.of("overwrite-G1"), "application/pdf");
      second = stack.upload("overwrite/invoice.pdf", new byte[0], "application/pdf");
    } finally {
      stack.resume("DocumentUploaded");
    }
    assertTrue(second.getGeneration() > first.getGeneration());
    assertEquals("analysed", analysisOnceNotified(key(first)).getString("status"),
        "the first event read its own generation, not the empty one that replaced it");
    assertEquals("rejected", analysisOnceNotified(key(second)).getString("status"));
  }

  @Test
  void generationThatNoLongerExists_isRejectedForGood() throws Exception {
    Blob blob = stack.upload("gone/invoice.pdf", InvoicePdf.of("X1"), "application/pdf");
    analysisOnceNotified(key(blob));
    long missing = blob.getGeneration() - 1;
    HttpResponse<String> response = postEvent(finalized("gone/invoice.pdf", missing, "application/pdf", 100));
    assertEquals(200, response.statusCode(), "acknowledged: retrying cannot bring it back");
    String key = "gcs:inbox/gone/invoice.pdf#" + missing;
    assertRejectedOnce(key, "no longer exists");
  }

  @Test
  void malformedEvents_areAcknowledged_leaveNoTrace_andTheNextGoodEventIsServed() throws Exception {
    int records = stack.ledgerRecords();
    List<Map<String, String>> headers = List.of(
        ce("google.cloud.storage.object.v1.deleted", "e1"),
        ce("google.cloud.storage.object.v1.finalized", "e2"),
        ce("google.cloud.storage.object.v1.finalized", "e3"),
        ce("google.cloud.storage.object.v1.finalized", "e4"),
        ce("google.cloud.storage.object.v1.finalized", "e5"));
    List<byte[]> bodies = List.of(
        finalized("a.pdf", 1, "application/pdf", 10),
        "{not json".getBytes(StandardCharsets.UTF_8),
        "{\"bucket\":\"inbox\",\"name\":\"a.pdf\"}".getBytes(StandardCharsets.UTF_8),
        "{\"bucket\":\"inbox\",\"name\":\"a.pdf\",\"generation\":\"soon\"}".getBytes(StandardCharsets.UTF_8),
        finalized("x".repeat(1100), 1, "application/pdf", 10));
    for (int i = 0; i < headers.size(); i++) {
      HttpResponse<String> response = stack.post("DocumentUploaded", bodies.get(i), headers.get(i));
      assertEquals(200, response.statusCode(), "event " + i + " is acknowledged: " + response.body());
      assertTrue(response.body().isEmpty() || !response.body().contains("Exception"), response.body());
    }
    HttpResponse<String> noData =
        stack.post("DocumentUploaded", new byte[0], ce("google.cloud.storage.object.v1.finalized", "e6"));
    assertEquals(200, noData.statusCode());
    assertEquals(records, stack.ledgerRecords(), "no ledger write for a malformed event");

    Blob good = stack.upload("after/malformed.pdf", InvoicePdf.of("M1"), "application/pdf");
    assertEquals("analysed", analysisOnceNotified(key(good)).getString("status"));
  }

  private static HttpResponse<String> postEvent(byte[] body) {
    return stack.post("DocumentUploaded", body,
        ce("google.cloud.storage.object.v1.finalized", "direct-" + System.nanoTime()));
  }

  private static Map<String, String> ce(String type, String id) {
    Map<String, String> headers = new HashMap<>();
    headers.put("ce-specversion", "1.0");
    headers.put("ce-id", id);
    headers.put("ce-type", type);
    headers.put("ce-source", "//storage.googleapis.com/projects/_/buckets/inbox");
    headers.put("ce-subject", "objects/x");
    headers.put("ce-time", "2026-11-30T00:00:00Z");
    headers.put("content-type", "application/json");
    return headers;
  }

  private static byte[] finalized(String name, long generation, String contentType, long size) throws Exception {
    Map<String, Object> data = new HashMap<>();
    data.put("bucket", "inbox");
    data.put("name", name);
    data.put("generation", String.valueOf(generation));
    data.put("metageneration", "1");
    data.put("contentType", contentType);
    data.put("size", String.valueOf(size));
    return JSON.writeValueAsBytes(data);
  }
}
