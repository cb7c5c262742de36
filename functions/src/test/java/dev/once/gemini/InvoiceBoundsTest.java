package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.types.GenerateContentResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Issue 38, item 5: what the model writes is held to our bounds before it reaches any record. */
class InvoiceBoundsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aHostileInvoice_isCutToOurBounds_sayingWhatWasCut() throws Exception {
    Map<String, Object> invoice = new LinkedHashMap<>();
    invoice.put("supplier", "€".repeat(12_000)); // 36 KB of UTF-8
    invoice.put("invoiceNumber", "INV-1");
    invoice.put("total", 120.5);
    invoice.put("injected", Map.of("a", "b"));
    List<Object> lines = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      lines.add(Map.of("description", "line " + i + " " + "x".repeat(400), "amount", i, "extra", "y"));
    }
    invoice.put("lineItems", lines);

    InvoiceBounds.Bounded bounded = InvoiceBounds.bound(invoice);

    assertTrue(JSON.writeValueAsString(bounded.invoice()).getBytes(StandardCharsets.UTF_8).length
        <= InvoiceBounds.MAX_JSON_BYTES);
    assertEquals("€".repeat(InvoiceBounds.MAX_TEXT_CHARS) + "…", bounded.invoice().get("supplier"));
    assertEquals(List.of("supplier", "(fields outside the schema)", "lineItems"), bounded.truncated());
    assertEquals("INV-1", bounded.invoice().get("invoiceNumber"));
    assertEquals(120.5, bounded.invoice().get("total"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> kept = (List<Map<String, Object>>) bounded.invoice().get("lineItems");
    assertTrue(!kept.isEmpty() && kept.size() < InvoiceBounds.MAX_LINE_ITEMS, String.valueOf(kept.size()));
    assertEquals(Map.of("description", "line 0 " + "x".repeat(InvoiceBounds.MAX_TEXT_CHARS - 7) + "…", "amount", 0),
        kept.get(0), "the first lines kept, each within the bounds, without fields outside the schema");
  }

  @Test
  void anOrdinaryInvoice_isKeptAsItIs() {
    Map<String, Object> invoice = Map.of("supplier", "ACME", "total", 3.0, "lineItems",
        List.of(Map.of("description", "a", "amount", 3.0)));
    InvoiceBounds.Bounded bounded = InvoiceBounds.bound(invoice);
    assertEquals(invoice, bounded.invoice());
    assertEquals(List.of(), bounded.truncated());
  }

  @Test
  void theAnalysisOfAnAnswer_isBounded_andNamesWhatWasCut() throws Exception {
    String answer = JSON.writeValueAsString(Map.of("supplier", "Ω".repeat(6_000), "total", 1));
    GenerateContentResponse response = GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":"
        + "[{\"text\":" + JSON.writeValueAsString(answer) + "}]},\"finishReason\":\"STOP\"}]}");
    Analysis analysis = InvoiceAnalyzer.interpret("gemini-3.5-flash-lite", response, null);
    assertTrue(analysis.succeeded());
    assertEquals(List.of("supplier"), analysis.truncated());
    assertEquals(InvoiceBounds.MAX_TEXT_CHARS + 1, ((String) analysis.invoice().get("supplier")).length());
  }
}
