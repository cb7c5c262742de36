package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.errors.ServerException;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.Usage;
import dev.once.guard.Refusal;
import dev.once.budget.Budget;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.ContentKeys;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Records;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mockito.ArgumentCaptor;

/**
 * The same bytes uploaded again, under another name or as a new generation of the same name, are one invoice: the first
 * document is analysed and billed; each copy is recorded and published (so notified) under its own key as a
 * {@code duplicate} naming the first, with no Gemini call, no reservation and no bill. An upload with the metadata
 * {@code once-reanalyse: true} is analysed all the same.
 */
class SameContentTest extends DocumentFlowMocks {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DocumentSource FIRST = pdf("inbox", "invoice.pdf", 17, false);
  private static final DocumentSource RENAMED = pdf("inbox", "invoice (1).pdf", 4, false);
  private static final DocumentSource NEW_GENERATION = pdf("inbox", "invoice.pdf", 18, false);
  private static final Analysis ANALYSED = new Analysis("gemini-3.5-flash-lite",
      Map.of("supplier", "ACME", "total", 12.5), null, new Usage(300, 100, 400));

  private static DocumentSource pdf(String bucket, String name, long generation, boolean reanalyse) {
    return new DocumentSource(bucket, name, generation, "application/pdf", PDF.length, "bWQ1", null, reanalyse);
  }

  @Test
  void sync_theSameBytesUnderAnotherNameOrGeneration_costOneGeminiCallAndOneBill() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    Report first = handle(flow, FIRST);
    Report renamed = handle(flow, RENAMED);
    Report again = handle(flow, NEW_GENERATION);
    Report redelivered = handle(flow, RENAMED);

    assertEquals(OutcomeLabel.PROCESSED, first.outcome());
    assertEquals(OutcomeLabel.PROCESSED, renamed.outcome());
    assertEquals(OutcomeLabel.PROCESSED, again.outcome());
    assertEquals(OutcomeLabel.DUPLICATE, redelivered.outcome());
    assertEquals(key(FIRST).logHash(), renamed.details().get("duplicateOfHash"),
        "the log line names the first, hashed");
    assertTrue(!renamed.details().containsValue(key(FIRST).value()), "and not by its name: " + renamed.details());
    verify(analyzer, times(1)).analyse(any(), anyString());
    assertEquals(List.of(key(FIRST).documentId()), List.copyOf(ledger.collection(Records.BILLING).keySet()), "one bill");
    for (DocumentSource copy : List.of(RENAMED, NEW_GENERATION)) {
      Map<String, Object> analysis = ledger.document(Records.ANALYSES, key(copy).documentId()).orElseThrow();
      assertEquals("duplicate", analysis.get("status"));
      assertEquals(key(FIRST).value(), analysis.get("duplicateOf"));
    }
    Map<String, JsonNode> published = published(3);
    assertEquals("analysed", published.get(key(FIRST).value()).path("status").asText());
    JsonNode copy = published.get(key(RENAMED).value());
    assertEquals("duplicate", copy.path("status").asText(), copy.toString());
    assertEquals(key(FIRST).value(), copy.path("duplicateOf").asText());
    assertEquals(key(FIRST).documentId(), copy.path("duplicateOfAnalysisId").asText());
    assertTrue(copy.path("invoice").isMissingNode(), "the invoice is the first one's: a copy is not a second invoice");
  }

  /** Batch mode: the copy is not queued (so no job carries it, and nothing is reserved for it); it is published. */
  @Test
  void batch_aCopyIsNotQueued_andIsPublishedAsADuplicate() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH, Budget.NONE);

    handle(flow, FIRST);
    Report renamed = handle(flow, RENAMED);

    assertEquals(OutcomeLabel.PROCESSED, renamed.outcome());
    assertEquals("queued", ledger.document(Records.ANALYSES, key(FIRST).documentId()).orElseThrow().get("status"));
    assertEquals("duplicate", ledger.document(Records.ANALYSES, key(RENAMED).documentId()).orElseThrow().get("status"));
    assertEquals("duplicate", published(1).get(key(RENAMED).value()).path("status").asText());
    assertTrue(ledger.collection(Records.BILLING).isEmpty());
  }

  /** A deliberate re-analysis: the upload's metadata once-reanalyse=true. It is analysed and billed on its own. */
  @ParameterizedTest
  @EnumSource(DocumentFlow.Mode.class)
  void anUploadAskingForReanalysis_isAnalysedAgain(DocumentFlow.Mode mode) throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(mode, Budget.NONE);
    DocumentSource asked = pdf("inbox", "invoice.pdf", 19, true);

    handle(flow, FIRST);
    handle(flow, asked);

    String status = mode == DocumentFlow.Mode.SYNC ? "analysed" : "queued";
    assertEquals(status, ledger.document(Records.ANALYSES, key(asked).documentId()).orElseThrow().get("status"));
    if (mode == DocumentFlow.Mode.SYNC) {
      verify(analyzer, times(2)).analyse(any(), anyString());
      assertEquals(2, ledger.collection(Records.BILLING).size());
    }
  }

  /** The first document's own retry is still the first: the content's record names it. */
  @Test
  void theFirstDocumentsRetry_afterAnOutage_isStillAnalysed_andACopyAfterItIsNot() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    org.junit.jupiter.api.Assertions.assertThrows(Refusal.class, () -> handle(flow, FIRST));
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, RENAMED).outcome());
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, FIRST).outcome());

    verify(analyzer, times(2)).analyse(any(), anyString()); // the 503 and the retry: both the first's
    assertEquals("analysed", ledger.document(Records.ANALYSES, key(FIRST).documentId()).orElseThrow().get("status"));
    assertEquals("duplicate", ledger.document(Records.ANALYSES, key(RENAMED).documentId()).orElseThrow().get("status"));
  }

  /**
   * A copy delivered while the first holds the content's record (between its claim and its completion, or a holder
   * that died there until its lease runs out) is in flight, as a claim held elsewhere is (logged so, and redelivered):
   * more deliveries than the tries an analysis may spend give nothing up, cost nothing, and once the record is done
   * the copy is a duplicate.
   */
  @Test
  void aCopyMeetingTheContentRecordHeld_isRedeliveredWithoutSpendingATry_thenIsADuplicate() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);
    IdempotencyKey content = ContentKeys.of("inbox", "application/pdf", PDF);
    Claim held = ((ClaimResult.Acquired) ledger.claim(content, Effects.CONTENT)).claim();

    for (int delivery = 0; delivery < 6; delivery++) { // more than ONCE_MAX_ATTEMPTS (5)
      Report report = handle(flow, RENAMED);
      assertEquals(OutcomeLabel.IN_FLIGHT, report.outcome(), "logged in flight, then redelivered: " + report);
    }
    LedgerRecord analyse = ledger.lookup(key(RENAMED), Effects.ANALYSE).orElseThrow();
    assertEquals(RecordState.CLAIMED, analyse.state(), "released, not given up: " + analyse);
    assertEquals(0, analyse.spent(), "no try spent: " + analyse);

    ledger.complete(held, Map.of("document", key(FIRST).value()), SideWrites.NONE);
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, RENAMED).outcome());
    assertEquals("duplicate", ledger.document(Records.ANALYSES, key(RENAMED).documentId()).orElseThrow().get("status"));
    verify(analyzer, times(0)).analyse(any(), anyString());
  }

  /** Another bucket (another inbox, another tenant) never learns of this one's documents. */
  @Test
  void theSameBytesInAnotherBucket_areAnalysedThere() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    handle(flow, FIRST);
    handle(flow, pdf("other-inbox", "invoice.pdf", 17, false));

    verify(analyzer, times(2)).analyse(any(), anyString());
  }

  private static IdempotencyKey key(DocumentSource document) {
    return DocumentFlow.key(document);
  }

  /** What was published, by each message's key: exactly {@code count} messages. */
  private Map<String, JsonNode> published(int count) throws Exception {
    ArgumentCaptor<byte[]> data = ArgumentCaptor.forClass(byte[].class);
    verify(publisher, times(count)).publish(eq(TOPIC), data.capture(), anyMap());
    Map<String, JsonNode> byKey = new java.util.HashMap<>();
    for (byte[] message : new ArrayList<>(data.getAllValues())) {
      JsonNode json = JSON.readTree(message);
      byKey.put(json.path("key").asText(), json);
    }
    return byKey;
  }
}
