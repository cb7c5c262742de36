package dev.once.functions.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;

import com.google.genai.errors.ClientException;
import com.google.genai.errors.ServerException;
import dev.once.budget.Budget;
import dev.once.entry.Report;
import dev.once.functions.TestSignatures;
import dev.once.gemini.Analysis;
import dev.once.gemini.Usage;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.Ledger;
import dev.once.ledger.RecordState;
import dev.once.ledger.SettledClaim;
import dev.once.ledger.Settlement;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.ContentKeys;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.EventCounts;
import dev.once.pipeline.RecordWrites;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The document flow against the in-memory ledger, with Storage, Gemini and Pub/Sub mocked: every effect is counted
 * on the mock that would have carried it out. (The end-to-end suites run the same flow under the invoker.)
 */
class DocumentFlowTest extends DocumentFlowMocks {
  private static final DocumentSource INVOICE =
      new DocumentSource("inbox", "invoice.pdf", 17, "application/pdf", PDF.length, "bWQ1", null);
  private static final IdempotencyKey KEY = DocumentFlow.key(INVOICE);
  private static final Analysis ANALYSED = new Analysis("gemini-3.5-flash-lite",
      Map.of("supplier", "ACME", "total", 12.5), null, new Usage(300, 100, 400));

  private DocumentFlow flow(DocumentFlow.Mode mode) {
    return flow(mode, Budget.NONE);
  }

  @Test
  void firstDelivery_analysesBillsAndPublishesOnce_andTheDuplicateCallsNothing() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC);

    Report first = handle(flow, INVOICE);
    Report second = handle(flow, INVOICE);

    assertEquals(OutcomeLabel.PROCESSED, first.outcome());
    assertEquals(Map.of(Effects.ANALYSE, "processed", Effects.PUBLISH, "processed"), first.effects());
    assertEquals(OutcomeLabel.DUPLICATE, second.outcome());
    verify(reader, times(1)).read(any(), any(Long.class));
    verify(analyzer, times(1)).analyse(any(), anyString());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(KEY.value()));
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow();
    assertEquals("analysed", analysis.get("status"));
    Map<String, Object> bill = ledger.document(RecordWrites.BILLING, KEY.documentId()).orElseThrow();
    assertEquals(400L, bill.get("totalTokens"));
    assertEquals(340L, bill.get("costMicroUsd"), "300 in at 0.30 + 100 out at 2.50 per million");
    assertEquals(340L, first.details().get("costMicroUsd"), "the processed line carries the cost");
    assertEquals("gemini-3.5-flash-lite", first.details().get("model"));
    assertEquals(1L, first.details().get(EventCounts.DOCUMENTS), "one document finished, for the hourly count");
    assertEquals(0L, first.details().get(EventCounts.GIVEN_UP));
    assertNull(second.details().get(EventCounts.DOCUMENTS), "a duplicate finishes nothing");
    verifyNoInteractions(estimator, queries);
    assertTrue(ledger.collection("budget").isEmpty(), "without a budget nothing is estimated, read or written");
  }

  @Test
  void theFirstCopyOfItsBytes_claimsItsContentWithItsAnalysis_readingTheDocumentOnce() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    List<String> writes = new ArrayList<>();
    Ledger counting = new ForwardingLedger(ledger) {
      @Override
      public SettledClaim claimAndSettle(IdempotencyKey key, String effect, ClaimOptions options,
          Settlement alongside) {
        writes.add("claim " + effect + " + settle " + alongside.effect());
        return super.claimAndSettle(key, effect, options, alongside);
      }

      @Override
      public Optional<ClaimResult> settle(IdempotencyKey key, String effect, Map<String, Object> outcome) {
        writes.add("settle " + effect);
        return super.settle(key, effect, outcome);
      }
    };

    assertEquals(OutcomeLabel.PROCESSED,
        handle(flow(DocumentFlow.Mode.SYNC, Budget.NONE, counting), INVOICE).outcome());

    assertEquals(List.of("claim analyse + settle content"), writes, "one commit claims both");
    verify(reader, times(1)).read(any(), any(Long.class));
    assertEquals(Map.of("document", KEY.value()),
        ledger.lookup(ContentKeys.of("inbox", "application/pdf", PDF), Effects.CONTENT).orElseThrow().outcome());
  }

  @Test
  void aDocumentUnreadableBeforeItsClaim_isReadAgainUnderIt_andItsContentClaimedThen() throws Exception {
    when(reader.read(any(), any(Long.class))).thenThrow(new IllegalStateException("storage: 503")).thenReturn(PDF);
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);

    Report report = handle(flow(DocumentFlow.Mode.SYNC), INVOICE);

    assertEquals(OutcomeLabel.PROCESSED, report.outcome(), report.toString());
    assertEquals(1, report.attempts(), "the failed read came before any claim");
    verify(reader, times(2)).read(any(), any(Long.class));
    verify(analyzer, times(1)).analyse(any(), anyString());
    assertEquals(Map.of("document", KEY.value()),
        ledger.lookup(ContentKeys.of("inbox", "application/pdf", PDF), Effects.CONTENT).orElseThrow().outcome());
  }

  @Test
  void aDocumentGoneBeforeItsClaim_isRefusedUnderIt_withoutReadingItAgain() throws Exception {
    when(reader.read(any(), any(Long.class))).thenThrow(new DocumentReader.Gone("generation 17 no longer exists"));

    Report report = handle(flow(DocumentFlow.Mode.SYNC), INVOICE);

    assertEquals(OutcomeLabel.REJECTED, report.outcome());
    verify(reader, times(1)).read(any(), any(Long.class));
    assertEquals(RecordState.REJECTED, ledger.lookup(KEY, Effects.ANALYSE).orElseThrow().state());
    assertEquals("rejected", ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow().get("status"));
    verify(publisher, times(1)).publish(eq(TOPIC), any(), anyMap());
  }

  @Test
  void aTypeThatIsNotAccepted_isRejectedAndPublished_withoutReadingOrCallingGemini() throws Exception {
    DocumentSource text = new DocumentSource("inbox", "notes.txt", 3, "text/plain", 10, null, null);

    Report report = handle(flow(DocumentFlow.Mode.SYNC), text);

    assertEquals(OutcomeLabel.REJECTED, report.outcome());
    verify(reader, never()).read(any(), any(Long.class));
    verify(analyzer, never()).analyse(any(), anyString());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), anyMap());
    assertEquals("rejected",
        ledger.document(RecordWrites.ANALYSES, DocumentFlow.key(text).documentId()).orElseThrow().get("status"));
  }

  @Test
  void aGeminiOutage_releasesTheClaimWithoutUsingTheCap_andTheRedeliveryAnalysesOnce() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded"))
        .thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC);

    Refusal refused = assertThrows(Refusal.class, () -> handle(flow, INVOICE));

    assertEquals(Refusal.Kind.NOT_PERFORMED, refused.kind());
    assertInstanceOf(ServerException.class, refused.getCause());
    assertEquals(RecordState.CLAIMED, ledger.lookup(KEY, Effects.ANALYSE).orElseThrow().state());
    assertEquals(0, ledger.lookup(KEY, Effects.ANALYSE).orElseThrow().spent(), "a 503 before generation bills nothing");
    assertTrue(ledger.document(RecordWrites.BILLING, KEY.documentId()).isEmpty(), "nothing billed for the failure");
    Report retried = handle(flow, INVOICE);

    assertEquals(OutcomeLabel.PROCESSED, retried.outcome());
    assertEquals(2, retried.attempts());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), anyMap());
  }

  @Test
  void callsThatMayHaveBeenBilled_areCapped_thenTheDocumentFails_isPublishedAsSuch_andGeminiIsNotCalledAgain()
      throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new UncheckedIOException(new SocketTimeoutException("timeout")));
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC);

    for (int i = 0; i < 3; i++) {
      assertThrows(UncheckedIOException.class, () -> handle(flow, INVOICE));
    }
    Report gaveUp = handle(flow, INVOICE);
    Report again = handle(flow, INVOICE);

    assertEquals(OutcomeLabel.FAILED, gaveUp.outcome(), "the log line says what the analysis says");
    assertEquals(Map.of(Effects.ANALYSE, "failed", Effects.PUBLISH, "processed"), gaveUp.effects());
    assertEquals(OutcomeLabel.DUPLICATE, again.outcome());
    verify(analyzer, times(3)).analyse(any(), anyString());
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow();
    assertEquals("failed", analysis.get("status"));
    assertEquals(
        "gave up after 3 tries that may have run: UncheckedIOException: java.net.SocketTimeoutException: timeout",
        analysis.get("reason"));
    assertEquals(analysis.get("reason"), gaveUp.details().get("reason"), "the log line says why");
    assertEquals(1L, gaveUp.details().get(EventCounts.GIVEN_UP),
        "given up, counted once: by the delivery that gave up");
    assertNull(again.details().get(EventCounts.GIVEN_UP), "a later delivery counts it no more");
    assertTrue(ledger.document(RecordWrites.BILLING, KEY.documentId()).isEmpty());
    verify(publisher, times(1)).publish(eq(TOPIC), org.mockito.ArgumentMatchers.argThat(
        data -> new String(data, StandardCharsets.UTF_8).contains("\"status\":\"failed\"")), anyMap());
  }

  /** A model that refuses the request's schema must not reject every document for good: retried, never capped. */
  @Test
  void aConfigurationGeminiRefuses_isRetried_notBlamedOnTheDocument() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenThrow(new ClientException(400, "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"responseSchema\" at 'generation_config'"));
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC);

    for (int i = 0; i < 6; i++) {
      assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> handle(flow, INVOICE)).kind());
    }
    assertEquals(RecordState.CLAIMED, ledger.lookup(KEY, Effects.ANALYSE).orElseThrow().state());
    assertTrue(ledger.document(RecordWrites.ANALYSES, KEY.documentId()).isEmpty(), "not rejected");
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aFailedPublication_isRetriedAlone_withoutASecondGeminiCall() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    when(publisher.publish(eq(TOPIC), any(), anyMap()))
        .thenThrow(new IllegalStateException("Pub/Sub unavailable"))
        .thenReturn("m-2");
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC);

    assertThrows(IllegalStateException.class, () -> handle(flow, INVOICE));
    Report retried = handle(flow, INVOICE);

    assertEquals(Map.of(Effects.ANALYSE, "duplicate", Effects.PUBLISH, "processed"), retried.effects());
    verify(analyzer, times(1)).analyse(any(), anyString());
    verify(publisher, times(2)).publish(eq(TOPIC), any(), anyMap());
  }

  @Test
  void batchMode_queuesTheDocument_asksForTheJobsDue_andPublishesNothingYet() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH);

    Report first = handle(flow, INVOICE);
    Report second = handle(flow, INVOICE);

    assertEquals(OutcomeLabel.PROCESSED, first.outcome());
    assertEquals(OutcomeLabel.DUPLICATE, second.outcome());
    verify(submitter, times(1)).submitIfDue();
    verify(publisher, never()).publish(anyString(), any(), anyMap());
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow();
    assertEquals("queued", analysis.get("status"));
    assertEquals((long) PDF.length, analysis.get("size"));
    assertTrue(analysis.containsKey("queuedAt"));
  }

  @Test
  void aSubmitterThatFails_leavesTheDocumentQueued_forTheReconciler() throws Exception {
    when(submitter.submitIfDue()).thenThrow(new IllegalStateException("Firestore unavailable"));

    assertEquals(OutcomeLabel.PROCESSED, handle(flow(DocumentFlow.Mode.BATCH), INVOICE).outcome());
    assertEquals("queued", ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow().get("status"));
  }

  @Test
  void theSameGeneration_withOtherContent_isAConflict_andNotAnalysedAgain() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH);
    handle(flow, INVOICE);
    DocumentSource forged =
        new DocumentSource("inbox", "invoice.pdf", 17, "application/pdf", PDF.length, "b3RoZXI=", null);

    Report report = handle(flow, forged);

    assertEquals(OutcomeLabel.CONFLICT, report.outcome());
    verify(reader, times(1)).read(any(), any(Long.class));
  }

  @Test
  void contentTypes_areComparedWithoutParametersOrCase() {
    assertEquals("application/pdf", new DocumentSource("b", "n", 1, " Application/PDF; x=y", 1, null, null).mimeType());
    assertEquals("", new DocumentSource("b", "n", 1, null, 1, null, null).mimeType());
  }
}
