package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
  private static final DocumentSource SOURCE = new DocumentSource("inbox", "a.pdf", 3, "application/pdf", 10, "md5", null);

  @Test
  void sameSummary_inAnyMapOrder_givesTheSameBytes() {
    Map<String, Object> summary = ResultMessage.analysed(KEY, SOURCE,
        new Analysis("gemini-3.5-flash-lite", Map.of("supplier", "ACME", "total", 120.5, "currency", "EUR"), null, Usage.NONE), null);
    Map<String, Object> reordered = new HashMap<>();
    new ArrayList<>(summary.keySet()).reversed().forEach(k -> reordered.put(k, summary.get(k)));
    assertArrayEquals(ResultMessage.json(summary), ResultMessage.json(reordered));
  }

  @Test
  void analysedSummary_carriesOnlyTheHeadline() {
    Map<String, Object> invoice = new LinkedHashMap<>();
    invoice.put("supplier", "ACME");
    invoice.put("total", 120.5);
    invoice.put("lineItems", List.of(Map.of("description", "x", "amount", 1)));
    String json = new String(ResultMessage.json(ResultMessage.analysed(KEY, SOURCE,
        new Analysis("m", invoice, null, Usage.NONE), null)), StandardCharsets.UTF_8);
    assertEquals("{\"analysisId\":\"" + KEY.documentId() + "\",\"invoice\":{\"supplier\":\"ACME\",\"total\":120.5},"
        + "\"key\":\"gcs:inbox/a.pdf#3\",\"mode\":\"sync\",\"source\":{\"bucket\":\"inbox\",\"generation\":3,"
        + "\"name\":\"a.pdf\"},\"status\":\"analysed\"}", json);
  }

  @Test
  void failedAndRejectedSummaries_sayWhy() {
    assertEquals("failed", ResultMessage.analysed(KEY, SOURCE, new Analysis("m", Map.of(), "blocked", Usage.NONE), "batches/1")
        .get("status"));
    assertEquals("rejected", ResultMessage.rejected(KEY, SOURCE, "empty").get("status"));
    assertEquals("batch", ResultMessage.jobFailed(KEY, "batches/1", "expired").get("mode"));
    assertEquals(Map.of("idempotency_key", KEY.value()), ResultMessage.attributes(KEY));
  }
}
