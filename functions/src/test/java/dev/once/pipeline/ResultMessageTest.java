package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.gemini.Analysis;
import dev.once.gemini.Usage;
import dev.once.key.IdempotencyKey;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultMessageTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/a.pdf#3");
  private static final DocumentSource SOURCE =
      new DocumentSource("inbox", "a.pdf", 3, "application/pdf", 10, "md5", null);
  private static final Analysis ACME = new Analysis("gemini-3.5-flash-lite",
      Map.of("supplier", "ACME", "total", 120.5, "currency", "EUR"), null, Usage.NONE);

  @Test
  void sameSummary_readBackFromItsFieldsInAnyOrder_givesTheSameBytes() {
    ResultMessage summary = ResultMessage.analysed(KEY, SOURCE, ACME, null);
    Map<String, Object> fields = ResultMessage.CODEC.encode(summary);
    Map<String, Object> reordered = new HashMap<>();
    new ArrayList<>(fields.keySet()).reversed().forEach(k -> reordered.put(k, fields.get(k)));
    assertArrayEquals(summary.json(), ResultMessage.CODEC.decode(reordered).json());
  }

  /** A redelivery publishes what the ledger kept: every kind of result reads back as the same value, the same bytes. */
  @Test
  void everyKindOfResult_readsBackFromItsRecordUnchanged() {
    IdempotencyKey original = IdempotencyKey.of("gcs:inbox/first.pdf#1");
    Analysis cut = new Analysis("m", "m", Map.of("supplier", "x".repeat(150), "total", 3L), null, Usage.NONE, null,
        List.of("total"));
    List<ResultMessage> kinds = List.of(ResultMessage.analysed(KEY, SOURCE, ACME, null),
        ResultMessage.analysed(KEY, SOURCE, cut, "batches/1", 3),
        ResultMessage.analysed(KEY, SOURCE, new Analysis("m", Map.of(), "blocked", Usage.NONE), "batches/1"),
        ResultMessage.rejected(KEY, SOURCE, "empty"), ResultMessage.gaveUp(KEY, SOURCE, "gave up after 3 tries"),
        ResultMessage.duplicate(KEY, SOURCE, original), ResultMessage.jobFailed(KEY, "batches/2", "expired", 2));
    for (ResultMessage kind : kinds) {
      Map<String, Object> fields = ResultMessage.CODEC.encode(kind);
      assertEquals(kind, ResultMessage.CODEC.decode(fields), fields.toString());
      assertEquals(fields, ResultMessage.CODEC.encode(ResultMessage.CODEC.decode(fields)));
    }
    ResultMessage truncated = kinds.get(1);
    assertEquals(List.of("supplier", "total"), truncated.truncated());
    assertEquals(3L, ResultMessage.CODEC.encode(truncated).get("rerun"));
    assertEquals(original.documentId(), ResultMessage.CODEC.encode(kinds.get(5)).get("duplicateOfAnalysisId"));
  }

  @Test
  void analysedSummary_carriesOnlyTheHeadline() {
    Map<String, Object> invoice = new LinkedHashMap<>();
    invoice.put("supplier", "ACME");
    invoice.put("total", 120.5);
    invoice.put("lineItems", List.of(Map.of("description", "x", "amount", 1)));
    String json = new String(ResultMessage.analysed(KEY, SOURCE, new Analysis("m", invoice, null, Usage.NONE), null)
        .json(), StandardCharsets.UTF_8);
    assertEquals("{\"analysisId\":\"" + KEY.documentId() + "\",\"invoice\":{\"supplier\":\"ACME\",\"total\":120.5},"
        + "\"key\":\"gcs:inbox/a.pdf#3\",\"mode\":\"sync\",\"source\":{\"bucket\":\"inbox\",\"generation\":3,"
        + "\"name\":\"a.pdf\"},\"status\":\"analysed\"}", json);
  }

  @Test
  void failedAndRejectedSummaries_sayWhy() {
    ResultMessage failed = ResultMessage.analysed(KEY, SOURCE, new Analysis("m", Map.of(), "blocked", Usage.NONE),
        "batches/1");
    assertTrue(failed.is(DocumentStatus.FAILED));
    assertEquals("blocked", failed.reason());
    assertTrue(ResultMessage.rejected(KEY, SOURCE, "empty").is(DocumentStatus.REJECTED));
    assertEquals("batch", ResultMessage.jobFailed(KEY, "batches/1", "expired").mode());
    assertEquals(Map.of("idempotency_key", KEY.value()), ResultMessage.attributes(KEY));
  }

  /**
   * A result as Firestore hands it back, perhaps written by another version: whole numbers as {@code Long}, a status
   * this version does not know, no {@code mode}. It reads back, and is published again as it was written.
   */
  @Test
  void aResultWrittenByAnotherVersion_readsBack_andIsPublishedAsItWasWritten() {
    Map<String, Object> stored = new LinkedHashMap<>();
    stored.put("key", KEY.value());
    stored.put("status", "quarantined");
    stored.put("analysisId", KEY.documentId());
    stored.put("source", Map.of("bucket", "inbox", "name", "a.pdf", "generation", 3L));
    stored.put("invoice", Map.of("supplier", "ACME", "total", 120L));
    stored.put("reason", "held for review");
    ResultMessage read = ResultMessage.CODEC.decode(stored);
    assertEquals("quarantined", read.status());
    assertEquals(stored, ResultMessage.CODEC.encode(read)); // the same fields, so the same bytes published
  }
}
