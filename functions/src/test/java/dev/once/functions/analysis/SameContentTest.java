package dev.once.functions.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.errors.ServerException;
import dev.once.budget.Budget;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.ContentKeys;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mockito.ArgumentCaptor;

/**
 * The same bytes uploaded again, under another name or as a new generation of the same name, are one invoice: the first
 * document is analysed and billed; each copy is recorded and published (so notified) under its own key as a
 * {@code duplicate} naming the first, with no Gemini call, no reservation and no bill. An upload with the metadata
 * {@code once-reanalyse: true} is analysed all the same. The content's claim follows the analysis (decision 23): a copy
 * waits while the first is not analysed yet, and when the first is gone, refused or given up the next live copy is
 * analysed, once.
 */
class SameContentTest extends DocumentFlowMocks {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DocumentSource FIRST = pdf("inbox", "invoice.pdf", 17, false);
  private static final DocumentSource RENAMED = pdf("inbox", "invoice (1).pdf", 4, false);
  private static final DocumentSource NEW_GENERATION = pdf("inbox", "invoice.pdf", 18, false);
  private static final Analysis ANALYSED = new Analysis("gemini-3.5-flash-lite",
      Map.of("supplier", "ACME", "total", 12.5), null, new Usage(300, 100, 400));

  private final RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));

  /** What the analyses say, read from the in-memory store as RecordQueries reads them from Firestore. */
  @BeforeEach
  void analysesReadBack() {
    when(queries.analysis(anyString())).thenAnswer(call -> ledger.document(RecordWrites.ANALYSES, call.getArgument(0))
        .map(fields -> new RecordQueries.AnalysisState(IdempotencyKey.of((String) fields.get("key")),
            DocumentStatus.of(fields.get("status")).orElse(null), (String) fields.get("job"),
            (Instant) fields.get("deferredAt"), fields.get("model") != null)));
  }

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
    assertEquals(List.of(key(FIRST).documentId()), List.copyOf(ledger.collection(RecordWrites.BILLING).keySet()),
        "one bill");
    for (DocumentSource copy : List.of(RENAMED, NEW_GENERATION)) {
      Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, key(copy).documentId()).orElseThrow();
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

  /**
   * Batch mode: a copy delivered while the first is queued is not queued (so no job carries it, and nothing is reserved
   * for it) and not yet a duplicate: "analysed" is known only when the first's job completes. It waits, deferred
   * (nothing published), and the reconciler resumes it: once the first is analysed, it is its duplicate, published.
   */
  @Test
  void batch_aCopyWhileTheFirstIsQueued_waits_thenIsADuplicateOnceTheFirstIsAnalysed() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH, Budget.NONE);

    handle(flow, FIRST);
    Report waiting = handle(flow, RENAMED);

    assertEquals(OutcomeLabel.DEFERRED, waiting.outcome(), waiting.toString());
    assertEquals(true, waiting.details().get("waitingForContent"), waiting.toString());
    assertEquals("queued", status(FIRST));
    assertEquals("deferred", status(RENAMED));
    verify(publisher, never()).publish(anyString(), any(), anyMap());

    ledger.commit(records.analysed(key(FIRST), FIRST, ANALYSED, "batches/job-1")); // the first's job completed
    Report resumed = resume(flow, RENAMED);

    assertEquals(OutcomeLabel.PROCESSED, resumed.outcome(), resumed.toString());
    assertEquals("duplicate", status(RENAMED));
    assertEquals("duplicate", published(1).get(key(RENAMED).value()).path("status").asText());
    assertEquals(List.of(key(FIRST).documentId()), List.copyOf(ledger.collection(RecordWrites.BILLING).keySet()),
        "the first one's bill only");
  }

  /**
   * {@code gcloud storage mv} is a copy, then a delete. In batch mode the original is queued; the copy waits for it;
   * the delete lands before the original is gathered, and the submission refuses it as gone: the copy is the next live
   * one, and is queued in its place, so the invoice is analysed once.
   */
  @Test
  void batch_aRenameWhileTheFirstIsQueued_queuesTheCopy_whenTheSubmissionFindsTheFirstGone() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH, Budget.NONE);

    handle(flow, FIRST);
    handle(flow, RENAMED);
    // What BatchSubmitter records of a member it finds gone when it reads it.
    ledger.commit(records.rejected(key(FIRST), FIRST, "generation 17 of the object no longer exists"));
    Report resumed = resume(flow, RENAMED);

    assertEquals(OutcomeLabel.PROCESSED, resumed.outcome(), resumed.toString());
    assertEquals("queued", status(RENAMED));
    verify(publisher, never()).publish(anyString(), any(), anyMap());
    assertTrue(handle(flow, RENAMED).outcome() == OutcomeLabel.DUPLICATE, "queued once");
  }

  /**
   * Batch mode: a job that ended without an answer for the first (failed, or given up at the cap) passes its claim on:
   * the same bytes uploaded again are queued, without any metadata.
   */
  @Test
  void batch_aReuploadAfterTheFirstsJobFailed_isQueued() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.BATCH, Budget.NONE);

    handle(flow, FIRST);
    ledger.commit(records.jobFailed(key(FIRST), "batches/job-1", "the batch job ended FAILED: quota"));
    Report again = handle(flow, NEW_GENERATION);

    assertEquals(OutcomeLabel.PROCESSED, again.outcome(), again.toString());
    assertEquals("queued", status(NEW_GENERATION));
  }

  /**
   * Sync mode: after a brownout gave the first up (its cap of tries that may have been billed reached), its owner
   * uploads it again: analysed, billed and published, without any metadata.
   */
  @Test
  void sync_aReuploadAfterAGiveUp_isAnalysed() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(500, "INTERNAL", "x"), new ServerException(500, "INTERNAL", "x"),
            new ServerException(500, "INTERNAL", "x"))
        .thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    for (int attempt = 0; attempt < 3; attempt++) {
      assertThrows(RuntimeException.class, () -> handle(flow, FIRST));
    }
    assertEquals(OutcomeLabel.FAILED, handle(flow, FIRST).outcome(), "given up");
    Report again = handle(flow, NEW_GENERATION);

    assertEquals(OutcomeLabel.PROCESSED, again.outcome(), again.toString());
    assertEquals("failed", status(FIRST));
    assertEquals("analysed", status(NEW_GENERATION));
    assertTrue(ledger.document(RecordWrites.BILLING, key(NEW_GENERATION).documentId()).isPresent(), "billed");
    Map<String, JsonNode> published = published(2);
    assertEquals("failed", published.get(key(FIRST).value()).path("status").asText());
    assertEquals("analysed", published.get(key(NEW_GENERATION).value()).path("status").asText());
  }

  /**
   * Sync mode, a rename: the first's try met a 503 (released, to be redelivered), the copy came, the original was
   * deleted, and its redelivery finds it gone. The copy waited (deferred) instead of being the duplicate of a document
   * nobody analyses; resumed, it is the next live copy, and is analysed.
   */
  @Test
  void sync_aRenameAfterTheFirstMetA503_isAnalysed_whenTheFirstIsGone() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded")).thenReturn(ANALYSED);
    when(reader.read(eq(FIRST), anyLong())).thenReturn(PDF)
        .thenThrow(new DocumentReader.Gone("generation 17 of the object no longer exists"));
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    assertThrows(Refusal.class, () -> handle(flow, FIRST));
    Report waiting = handle(flow, RENAMED);
    assertEquals(OutcomeLabel.REJECTED, handle(flow, FIRST).outcome(), "the original, gone");
    Report resumed = resume(flow, RENAMED);

    assertEquals(OutcomeLabel.DEFERRED, waiting.outcome(), waiting.toString());
    assertEquals(OutcomeLabel.PROCESSED, resumed.outcome(), resumed.toString());
    assertEquals("analysed", status(RENAMED));
    assertTrue(ledger.document(RecordWrites.BILLING, key(RENAMED).documentId()).isPresent(), "billed");
    verify(analyzer, times(2)).analyse(any(), anyString()); // the first's 503, and the copy's analysis
    assertEquals("analysed", published(2).get(key(RENAMED).value()).path("status").asText());
  }

  /**
   * Two copies race for the claim of a first document that is gone: each on its own instance, the second passing the
   * claim on and analysing its copy between the first copy's read of the claim and its own passing. Exactly one copy
   * is analysed; the other is its duplicate.
   */
  @Test
  void twoCopiesRacingForAPassedClaim_oneIsAnalysed_theOtherIsItsDuplicate() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded")).thenReturn(ANALYSED);
    when(reader.read(eq(FIRST), anyLong())).thenReturn(PDF)
        .thenThrow(new DocumentReader.Gone("generation 17 of the object no longer exists"));
    DocumentFlow other = flow(DocumentFlow.Mode.SYNC, Budget.NONE);
    AtomicBoolean raced = new AtomicBoolean();
    DocumentFlow racing = flow(DocumentFlow.Mode.SYNC, Budget.NONE, new ForwardingLedger(ledger) {
      @Override
      public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
        if (raced.compareAndSet(false, true)) {
          assertEquals(OutcomeLabel.PROCESSED, handle(other, NEW_GENERATION).outcome(), "the other copy, first");
        }
        return super.invalidate(key, effect, generation, by, reason);
      }
    });
    assertThrows(Refusal.class, () -> handle(other, FIRST));
    assertEquals(OutcomeLabel.REJECTED, handle(other, FIRST).outcome(), "the original, gone");

    Report renamed = handle(racing, RENAMED);

    assertTrue(raced.get(), "the other copy ran in between");
    assertEquals(OutcomeLabel.PROCESSED, renamed.outcome(), renamed.toString());
    assertEquals("analysed", status(NEW_GENERATION));
    assertEquals("duplicate", status(RENAMED));
    assertEquals(key(NEW_GENERATION).value(),
        ledger.document(RecordWrites.ANALYSES, key(RENAMED).documentId()).orElseThrow().get("duplicateOf"));
    verify(analyzer, times(2)).analyse(any(), anyString()); // the first's 503, and one copy's analysis
    assertEquals(List.of(key(NEW_GENERATION).documentId()),
        List.copyOf(ledger.collection(RecordWrites.BILLING).keySet()));
  }

  /**
   * A first copy released after a failure and never redelivered (Eventarc retries a delivery for a day) is abandoned:
   * a copy resumed more than a day later takes its claim and is analysed.
   */
  @Test
  void aFirstCopyReleasedOverADayAgo_isAbandoned_andTheCopyIsAnalysed() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);
    assertThrows(Refusal.class, () -> handle(flow, FIRST));
    assertEquals(OutcomeLabel.DEFERRED, handle(flow, RENAMED).outcome());

    now = now.plus(SameContent.ABANDONED_AFTER).minusSeconds(60);
    assertEquals(OutcomeLabel.DEFERRED, resume(flow, RENAMED).outcome(), "within a day: it waits");
    now = now.plusSeconds(3600);
    assertEquals(OutcomeLabel.PROCESSED, resume(flow, RENAMED).outcome(), "abandoned: the copy is analysed");

    assertEquals("analysed", status(RENAMED));
    verify(analyzer, times(2)).analyse(any(), anyString());
  }

  /** A first copy deferred for the day's budget is not abandoned, however long it waits: the reconciler resumes it. */
  @Test
  void aFirstCopyDeferredForBudget_isNotAbandoned_itsCopyWaits() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded"));
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);
    assertThrows(Refusal.class, () -> handle(flow, FIRST));
    ledger.commit(records.deferred(key(FIRST), FIRST, "over the day's budget", now)); // as a budget deferral records

    handle(flow, RENAMED);
    now = now.plus(SameContent.ABANDONED_AFTER.multipliedBy(3));
    Report resumed = resume(flow, RENAMED);

    assertEquals(OutcomeLabel.DEFERRED, resumed.outcome(), resumed.toString());
    assertEquals(key(FIRST).value(), ledger.document(RecordWrites.ANALYSES, key(RENAMED).documentId()).orElseThrow()
        .get(RecordWrites.WAITING_FOR));
    verify(analyzer, times(1)).analyse(any(), anyString());
  }

  /** Sync parity: an answer that held no invoice was billed; the same bytes would get the same answer. */
  @Test
  void sync_aCopyOfADocumentWhoseBilledAnswerHeldNoInvoice_isItsDuplicate() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(new Analysis("gemini-3.5-flash-lite", null,
        "the document holds no invoice", new Usage(300, 100, 400)));
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    handle(flow, FIRST);
    handle(flow, RENAMED);

    assertEquals("failed", status(FIRST));
    assertEquals("duplicate", status(RENAMED));
    verify(analyzer, times(1)).analyse(any(), anyString());
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
    assertEquals(status, ledger.document(RecordWrites.ANALYSES, key(asked).documentId()).orElseThrow().get("status"));
    if (mode == DocumentFlow.Mode.SYNC) {
      verify(analyzer, times(2)).analyse(any(), anyString());
      assertEquals(2, ledger.collection(RecordWrites.BILLING).size());
    }
  }

  /**
   * The first document's own retry is still the first: the content's record names it. A copy delivered between its
   * failed try and its retry waits (deferred, nothing published); resumed once the first is analysed, it is its
   * duplicate.
   */
  @Test
  void theFirstDocumentsRetry_afterAnOutage_isStillAnalysed_andACopyMeanwhileWaits_thenIsADuplicate()
      throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, Budget.NONE);

    assertThrows(Refusal.class, () -> handle(flow, FIRST));
    assertEquals(OutcomeLabel.DEFERRED, handle(flow, RENAMED).outcome());
    assertEquals("deferred", status(RENAMED));
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, FIRST).outcome());
    assertEquals(OutcomeLabel.PROCESSED, resume(flow, RENAMED).outcome());

    verify(analyzer, times(2)).analyse(any(), anyString()); // the 503 and the retry: both the first's
    assertEquals("analysed", status(FIRST));
    assertEquals("duplicate", status(RENAMED));
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
    assertEquals("duplicate",
        ledger.document(RecordWrites.ANALYSES, key(RENAMED).documentId()).orElseThrow().get("status"));
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

  /** What the reconciler does with a deferred document: resume it as its analysis recorded it. */
  private Report resume(DocumentFlow flow, DocumentSource document) {
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, key(document).documentId()).orElseThrow();
    assertEquals("deferred", analysis.get("status"), "resumed as deferred: " + analysis);
    return flow.resume(new RecordQueries.Deferred(key(document), document, now));
  }

  private String status(DocumentSource document) {
    return (String) ledger.document(RecordWrites.ANALYSES, key(document).documentId()).orElseThrow().get("status");
  }

  private static IdempotencyKey key(DocumentSource document) {
    return DocumentFlow.key(document);
  }

  /** What was published, by each message's key: exactly {@code count} messages. */
  private Map<String, JsonNode> published(int count) throws Exception {
    ArgumentCaptor<byte[]> data = ArgumentCaptor.forClass(byte[].class);
    verify(publisher, times(count)).publish(eq(TOPIC), data.capture(), anyMap());
    Map<String, JsonNode> byKey = new HashMap<>();
    for (byte[] message : new ArrayList<>(data.getAllValues())) {
      JsonNode json = JSON.readTree(message);
      byKey.put(json.path("key").asText(), json);
    }
    return byKey;
  }
}
