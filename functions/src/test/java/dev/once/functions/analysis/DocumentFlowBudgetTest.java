package dev.once.functions.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.genai.errors.ClientException;
import com.google.genai.errors.ServerException;
import dev.once.budget.DailyBudget;
import dev.once.budget.DaySpend;
import dev.once.budget.Reservation;
import dev.once.budget.SpendCounters;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.Usage;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The spending guard in the document flow, against the in-memory ledger whose clock is Firestore's: Gemini, Storage
 * and Pub/Sub mocked, the estimate fixed. Each paid call reserves before it is made; its answer's commit settles it.
 */
class DocumentFlowBudgetTest extends DocumentFlowMocks {
  private static final long ESTIMATE = 21_021;
  /** 300 in at 0.30 + 100 out at 2.50 per million. */
  private static final long COST = 340;
  private static final Analysis ANALYSED = new Analysis("gemini-3.5-flash-lite",
      Map.of("supplier", "ACME", "total", 12.5), null, new Usage(300, 100, 400));

  @BeforeEach
  void wire() throws Exception {
    when(estimator.microUsd(PDF, "application/pdf", false)).thenReturn(ESTIMATE);
    when(estimator.microUsd(PDF, "application/pdf", true)).thenReturn(ESTIMATE / 2);
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    // What the analysis says, read from the in-memory store as RecordQueries reads it from Firestore.
    when(queries.analysis(anyString())).thenAnswer(call -> ledger.document(RecordWrites.ANALYSES, call.getArgument(0))
        .map(fields -> new RecordQueries.AnalysisState(IdempotencyKey.of((String) fields.get("key")),
            DocumentStatus.of(fields.get("status")).orElse(null), (String) fields.get("job"),
            (Instant) fields.get("deferredAt"))));
  }

  /** The budget's line per reservation, not read here. */
  private static final Log QUIET = Log.to(new PrintStream(OutputStream.nullOutputStream()));

  private DocumentFlow flow(DocumentFlow.Mode mode, long budgetMicroUsd) {
    return flow(mode, new DailyBudget(ledger, budgetMicroUsd, ZoneOffset.UTC, QUIET, "gemini budget"));
  }

  /**
   * Invoice {@code n}, a document of its own: the mocked reader gives every document the same bytes, which would make
   * the second a copy of the first (SameContentTest), so each asks to be analysed on its own.
   */
  private static DocumentSource document(int n) {
    return new DocumentSource("inbox", "invoice-" + n + ".pdf", 17, "application/pdf", PDF.length, "bWQ" + n, null,
        true);
  }

  private DaySpend spend(String day) {
    return new SpendCounters(ledger).read(LocalDate.parse(day));
  }

  private Map<String, Object> analysis(DocumentSource document) {
    return ledger.document(RecordWrites.ANALYSES, DocumentFlow.key(document).documentId()).orElseThrow();
  }

  @Test
  void aCallReservesItsEstimate_andTheCommitThatRecordsItsAnswerSettlesItToTheBill() {
    Report report = handle(flow(DocumentFlow.Mode.SYNC, 1_000_000), document(1));

    assertEquals(OutcomeLabel.PROCESSED, report.outcome());
    assertEquals(COST, report.details().get("costMicroUsd"));
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), COST, 0), spend("2026-11-30"));
    assertEquals(COST, ledger.document(RecordWrites.BILLING, DocumentFlow.key(document(1)).documentId()).orElseThrow()
        .get("costMicroUsd"), "the counters and the bill agree");
  }

  @Test
  void aDocumentTheDayCannotTake_isDeferred_notAnalysed_notPublished_andItsDuplicateKeepsItsPlace() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, ESTIMATE + COST - 1);
    handle(flow, document(1));
    Report deferred = handle(flow, document(2));

    assertEquals(OutcomeLabel.DEFERRED, deferred.outcome());
    assertEquals(Map.of(Effects.ANALYSE, "deferred"), deferred.effects(), "nothing published");
    assertTrue(String.valueOf(deferred.details().get("reason")).startsWith("over the budget of 2026-11-30"),
        deferred.details().toString());
    Map<String, Object> recorded = analysis(document(2));
    assertEquals("deferred", recorded.get("status"));
    assertEquals(deferred.details().get("reason"), recorded.get("reason"));
    Instant deferredAt = assertInstanceOf(Instant.class, recorded.get("deferredAt"));
    assertNotNull(recorded.get("source"), "what the reconciler resumes it from");
    assertEquals(0, ledger.lookup(DocumentFlow.key(document(2)), Effects.ANALYSE).orElseThrow().spent(),
        "the try does not count against the cap");
    verify(analyzer, times(1)).analyse(any(), anyString());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), anyMap());

    now = now.plusSeconds(60);
    assertEquals(OutcomeLabel.DEFERRED, handle(flow, document(2)).outcome(), "a redelivery: still no budget");
    assertEquals(deferredAt, analysis(document(2)).get("deferredAt"), "deferred since the first time");
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), COST, 0), spend("2026-11-30"), "nothing reserved");
  }

  @Test
  void aDocumentLargerThanAWholeDaysBudget_waitsForALargerBudget_atTheBackOfTheQueue_andIsAnalysedOnceItIsRaised() {
    DocumentFlow tooSmall = flow(DocumentFlow.Mode.SYNC, ESTIMATE - 1);
    Report deferred = handle(tooSmall, document(1));

    assertEquals(OutcomeLabel.DEFERRED, deferred.outcome());
    assertEquals(true, deferred.details().get(DocumentFlow.LARGER_THAN_A_DAY), deferred.details().toString());
    assertTrue(String.valueOf(analysis(document(1)).get("reason")).contains("alone is more than a whole day's budget"),
        analysis(document(1)).toString());
    Instant first = (Instant) analysis(document(1)).get("deferredAt");

    now = now.plusSeconds(600);
    Report again = tooSmall.resume(new RecordQueries.Deferred(DocumentFlow.key(document(1)), document(1), first));
    assertEquals(OutcomeLabel.DEFERRED, again.outcome());
    assertEquals(now, analysis(document(1)).get("deferredAt"),
        "moved to the back of the queue: it must not hold back the documents deferred after it");
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 0, 0), spend("2026-11-30"), "nothing reserved");

    Report resumed = flow(DocumentFlow.Mode.SYNC, ESTIMATE).resume(
        new RecordQueries.Deferred(DocumentFlow.key(document(1)), document(1), now));
    assertEquals(OutcomeLabel.PROCESSED, resumed.outcome(), "a budget that takes it");
    verify(analyzer, times(1)).analyse(any(), anyString());
  }

  @Test
  void theNextDay_byFirestoresClock_hasAFreshBudget_andTheDeferredDocumentIsAnalysedOnce() throws Exception {
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, ESTIMATE + COST - 1);
    handle(flow, document(1));
    now = Instant.parse("2026-11-30T23:59:59Z");
    assertEquals(OutcomeLabel.DEFERRED, handle(flow, document(2)).outcome());

    now = Instant.parse("2026-12-01T00:00:01Z");
    Instant deferredAt = (Instant) analysis(document(2)).get("deferredAt");
    Report resumed = flow.resume(new RecordQueries.Deferred(DocumentFlow.key(document(2)), document(2), deferredAt));
    Report duplicate = handle(flow, document(2));

    assertEquals(OutcomeLabel.PROCESSED, resumed.outcome());
    assertEquals(OutcomeLabel.DUPLICATE, duplicate.outcome());
    assertEquals("analysed", analysis(document(2)).get("status"));
    assertEquals(new DaySpend(LocalDate.parse("2026-12-01"), COST, 0), spend("2026-12-01"));
    verify(analyzer, times(2)).analyse(any(), anyString());
  }

  @Test
  void aRefusalBeforeAnyWork_releasesTheReservation_inTheReleaseCommit() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf")).thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded"));
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class,
        () -> handle(flow(DocumentFlow.Mode.SYNC, 1_000_000), document(1))).kind());
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 0, 0), spend("2026-11-30"));
  }

  @Test
  void aDocumentGeminiRefusesForGood_releasesItsReservation_withTheRejection() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new ClientException(400, "INVALID_ARGUMENT", "The document has no pages."));
    Report report = handle(flow(DocumentFlow.Mode.SYNC, 1_000_000), document(1));
    assertEquals(OutcomeLabel.REJECTED, report.outcome());
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 0, 0), spend("2026-11-30"));
  }

  @Test
  void aCallThatMayHaveBeenBilled_keepsItsReservation_andTheRetrySettlesOnlyItsOwn() throws Exception {
    when(analyzer.analyse(PDF, "application/pdf"))
        .thenThrow(new UncheckedIOException(new SocketTimeoutException("timeout")))
        .thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, 1_000_000);
    assertThrows(UncheckedIOException.class, () -> handle(flow, document(1)));
    assertEquals(ESTIMATE, spend("2026-11-30").reservedMicroUsd(), "the money may be spent: kept");

    assertEquals(OutcomeLabel.PROCESSED, handle(flow, document(1)).outcome());
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), COST, ESTIMATE), spend("2026-11-30"));
  }

  @Test
  void anEstimateThatCannotBeMade_isNotPerformed_andGeminiIsNotCalled() throws Exception {
    when(estimator.microUsd(PDF, "application/pdf", false))
        .thenThrow(new ServerException(503, "UNAVAILABLE", "overloaded"));
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class,
        () -> handle(flow(DocumentFlow.Mode.SYNC, 1_000_000), document(1))).kind());
    verify(analyzer, never()).analyse(any(), anyString());
    assertEquals(0, ledger.lookup(DocumentFlow.key(document(1)), Effects.ANALYSE).orElseThrow().spent());
  }

  @Test
  void aQueuedDocument_reservesAtBatchPrice_andRecordsItsReservationForTheJobsCompletion() throws Exception {
    Report report = handle(flow(DocumentFlow.Mode.BATCH, 1_000_000), document(1));

    assertEquals(OutcomeLabel.PROCESSED, report.outcome());
    Reservation recorded = Reservation.fromMap(analysis(document(1)).get("reservation"));
    assertEquals(ESTIMATE / 2, recorded.microUsd());
    assertEquals(LocalDate.parse("2026-11-30"), recorded.day());
    assertEquals(ESTIMATE / 2, spend("2026-11-30").reservedMicroUsd(), "reserved until the job completes");
  }

  @Test
  void farFromTheDaysEdge_theCeilingIsReserved_withoutCountingTokens_andNearerTheyAreCounted() throws Exception {
    long ceiling = 320_000;
    when(estimator.ceiling(false)).thenReturn(OptionalLong.of(ceiling));
    when(analyzer.analyse(PDF, "application/pdf")).thenReturn(ANALYSED);
    DocumentFlow flow = flow(DocumentFlow.Mode.SYNC, 1_000_000);

    handle(flow, document(1)); // the instance's first call: the day not read yet, so counted
    verify(estimator, times(1)).microUsd(PDF, "application/pdf", false);
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, document(2)).outcome());
    verify(estimator, times(1)).microUsd(PDF, "application/pdf", false);
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 2 * COST, 0), spend("2026-11-30"),
        "the ceiling settled to the bill");

    new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, QUIET, "gemini budget")
        .reserve(IdempotencyKey.of("gcs:inbox/elsewhere.pdf#3"), 400_000, reason -> SideWrites.NONE);
    // Its last reading (340 + the ceiling 320,000) and another ceiling pass half the day, and so does what it then
    // reads (another instance's 400,000): counted from here on.
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, document(3)).outcome());
    assertEquals(OutcomeLabel.PROCESSED, handle(flow, document(4)).outcome());
    verify(estimator, times(3)).microUsd(PDF, "application/pdf", false);
  }
}
