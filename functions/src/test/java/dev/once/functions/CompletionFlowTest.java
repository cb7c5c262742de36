package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.genai.types.BatchJob;
import com.google.genai.types.JobState;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.guard.Once;
import dev.once.internal.budget.DailyBudget;
import dev.once.internal.budget.DaySpend;
import dev.once.internal.budget.Reservation;
import dev.once.internal.budget.SpendCounters;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.InMemoryLedger;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.Records;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A batch job's completion, against the in-memory ledger, with Gemini, the record queries and Pub/Sub mocked. */
class CompletionFlowTest {
  private static final String TOPIC = "projects/p/topics/results";
  private static final String JOB = "batches/job-1";
  private static final IdempotencyKey JOB_KEY = GeminiCompletionKeys.ofName(JOB);
  private static final IdempotencyKey DOCUMENT = IdempotencyKey.of("gcs:inbox/a.pdf#1");
  private static final DocumentSource SOURCE = new DocumentSource("inbox", "a.pdf", 1, "application/pdf", 9, null, null);

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final BatchJobs batchJobs = mock(BatchJobs.class);
  private final RecordQueries queries = mock(RecordQueries.class);
  private final Gatherings gatherings = mock(Gatherings.class);
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final CompletionFlow flow;

  CompletionFlowTest() {
    Once once = new Once(ledger);
    Records records = new Records(PriceTable.fromSettings(Settings.of(Map.of())));
    flow = new CompletionFlow(once, () -> batchJobs, () -> records, () -> queries, () -> gatherings,
        new ResultPublication(once, () -> publisher, () -> TOPIC, TestSignatures.RESULTS));
    when(publisher.publish(eq(TOPIC), any(), anyMap())).thenReturn("m-1");
  }

  private static BatchJob job(JobState.Known state) {
    return BatchJob.builder().name(JOB).state(new JobState(state)).build();
  }

  @Test
  void aSucceededJob_isCompletedOnce_billingAndPublishingItsDocument_andTheRepeatCostsNoGeminiCall() {
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(DOCUMENT.value()),
        Optional.of(new Analysis("gemini-2.5-flash", Map.of("total", 3.0), null, new Usage(100, 10, 110))),
        Optional.empty())));

    Report first = flow.complete(JOB_KEY);
    Report webhookAgain = flow.complete(JOB_KEY);

    assertEquals(OutcomeLabel.PROCESSED, first.outcome());
    assertEquals(OutcomeLabel.DUPLICATE, webhookAgain.outcome());
    assertEquals(1L, first.details().get(EventCounts.DOCUMENTS), "the complete line counts the job's documents");
    assertEquals(0L, first.details().get(EventCounts.GIVEN_UP));
    assertEquals(null, webhookAgain.details().get(EventCounts.DOCUMENTS), "once");
    verify(batchJobs, times(1)).find(JOB);
    verify(batchJobs, times(1)).results(any());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(DOCUMENT.value()));
    assertEquals("analysed", ledger.document(Records.ANALYSES, DOCUMENT.documentId()).orElseThrow().get("status"));
    assertEquals(true, ledger.document(Records.BILLING, DOCUMENT.documentId()).orElseThrow().get("batch"));
  }

  @Test
  void theCompletingCommit_settlesEachDocumentsReservation_toItsBillAtBatchPrice() throws Exception {
    Reservation reserved = new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, Log.stdout(), "gemini budget")
        .reserve(DOCUMENT, 10_000, reason -> SideWrites.NONE);
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, reserved, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(DOCUMENT.value()),
        Optional.of(new Analysis("gemini-2.5-flash", Map.of("total", 3.0), null, new Usage(100, 10, 110))),
        Optional.empty())));

    Report report = flow.complete(JOB_KEY);

    long bill = 28; // (100 × 0.30 + 10 × 2.50) / 2, rounded
    assertEquals(bill, ledger.document(Records.BILLING, DOCUMENT.documentId()).orElseThrow().get("costMicroUsd"));
    assertEquals(new DaySpend(reserved.day(), bill, 0), new SpendCounters(ledger).read(reserved.day()));
    assertEquals(bill, report.details().get("costMicroUsd"), "the complete line carries the job's cost");
  }

  @Test
  void aJobThatEndedWithoutAnswers_releasesItsDocumentsReservations() throws Exception {
    Reservation reserved = new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, Log.stdout(), "gemini budget")
        .reserve(DOCUMENT, 10_000, reason -> SideWrites.NONE);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_EXPIRED)));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, reserved, null)));

    flow.complete(JOB_KEY);

    assertEquals(new DaySpend(reserved.day(), 0, 0), new SpendCounters(ledger).read(reserved.day()));
  }

  @Test
  void aJobStillRunning_isPending_andNothingIsWritten() {
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_RUNNING)));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(JOB_KEY));

    verify(queries, never()).submittedTo(anyString());
    assertTrue(ledger.collection(Records.ANALYSES).isEmpty());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aFailedJob_failsItsDocuments_billingNothing() {
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_EXPIRED)));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE, null)));

    Report report = flow.complete(JOB_KEY);
    assertEquals(OutcomeLabel.PROCESSED, report.outcome());
    assertEquals(1L, report.details().get(EventCounts.GIVEN_UP), "its document given up, on the complete line");

    verify(batchJobs, never()).results(any());
    Map<String, Object> analysis = ledger.document(Records.ANALYSES, DOCUMENT.documentId()).orElseThrow();
    assertEquals("failed", analysis.get("status"));
    assertEquals("the batch job ended JOB_STATE_EXPIRED", analysis.get("reason"));
    assertTrue(ledger.collection(Records.BILLING).isEmpty());
  }

  @Test
  void aForeignJob_isRejected_withoutItsResultsBeingDownloaded() {
    BatchJob foreign = job(JobState.Known.JOB_STATE_SUCCEEDED);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(foreign));
    when(queries.submittedTo(JOB)).thenReturn(List.of());

    Report report = flow.complete(JOB_KEY);
    Report again = flow.complete(JOB_KEY);

    assertEquals(OutcomeLabel.REJECTED, report.outcome());
    assertEquals(OutcomeLabel.DUPLICATE, again.outcome(), "refused once; the repeat costs one read");
    verify(batchJobs, never()).results(any());
    verify(batchJobs, times(1)).find(JOB);
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  /**
   * A finished job of ours no document waits for: a stray second job when its document's analysis names another job
   * or is done, refused once and never billed; the job a deferred document's next try will adopt, left for then.
   */
  @Test
  void aJobOfOursNoDocumentWaitsFor_isRefusedAsAStray_unlessItsDocumentIsDeferred() {
    BatchJob ours = BatchJob.builder().name(JOB).displayName(BatchJobs.displayName(DOCUMENT))
        .state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).build();
    when(batchJobs.find(JOB)).thenReturn(Optional.of(ours));
    when(queries.submittedTo(JOB)).thenReturn(List.of());
    when(queries.analysis(DOCUMENT.documentId()))
        .thenReturn(Optional.of(new RecordQueries.AnalysisState(DOCUMENT, Records.DEFERRED, null, null)));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(JOB_KEY));
    assertEquals(dev.once.internal.ledger.RecordState.CLAIMED, ledger.lookup(JOB_KEY, dev.once.pipeline.Effects.COMPLETE)
        .orElseThrow().state(), "released, to be completed once the document adopted it");

    when(queries.analysis(DOCUMENT.documentId()))
        .thenReturn(Optional.of(new RecordQueries.AnalysisState(DOCUMENT, Records.SUBMITTED, "batches/job-0", null)));
    assertEquals(OutcomeLabel.REJECTED, flow.complete(JOB_KEY).outcome());

    verify(batchJobs, never()).results(any());
    assertTrue(ledger.collection(Records.BILLING).isEmpty());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void anAnswerForADocumentWhoseAnalysisNamesAnotherJob_isNeverBilled() {
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    IdempotencyKey stranger = IdempotencyKey.of("gcs:inbox/other.pdf#9");
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(stranger.value()),
        Optional.of(new Analysis("gemini-2.5-flash", Map.of(), null, new Usage(1, 1, 2))), Optional.empty())));

    flow.complete(JOB_KEY);

    assertTrue(ledger.document(Records.BILLING, stranger.documentId()).isEmpty(), "the stranger is not billed");
    assertTrue(ledger.document(Records.ANALYSES, stranger.documentId()).isEmpty());
    Map<String, Object> own = ledger.document(Records.ANALYSES, DOCUMENT.documentId()).orElseThrow();
    assertEquals("failed", own.get("status"), "the job's own document got no answer: it fails, saying so");
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(DOCUMENT.value()));
  }

  /**
   * A gathered job of 250 documents: three chunks, each one commit, then its publishes. A publish that fails in the
   * second chunk (its publishes go 8 side by side) stops the completion; the next one resumes there: the first chunk is neither read nor published
   * again, every document is billed once, and the gathering leaves flight only with the last chunk.
   */
  @Test
  void aJobOfManyDocuments_isCompletedInChunks_andResumesWhereItStopped() {
    String gathering = "0123456789abcdef0123456789abcdef";
    BatchJob succeeded = BatchJob.builder().name(JOB).displayName(BatchJobs.gatheringName(gathering))
        .state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).build();
    List<RecordQueries.Submitted> members = java.util.stream.IntStream.range(0, 250)
        .mapToObj(i -> new RecordQueries.Submitted(IdempotencyKey.of("gcs:inbox/m" + i + ".pdf#1"),
            new DocumentSource("inbox", "m" + i + ".pdf", 1, "application/pdf", 9, null, null), Reservation.NONE,
            gathering))
        .toList();
    List<String> ids = members.stream().map(m -> m.documentKey().documentId()).toList();
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(gatherings.state(gathering)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, JOB, ids));
    when(queries.waitingFor(eq(JOB), eq(gathering), any())).thenAnswer(call -> {
      List<String> chunk = call.getArgument(2);
      return members.stream().filter(m -> chunk.contains(m.documentKey().documentId())).toList();
    });
    when(batchJobs.results(succeeded)).thenReturn(members.stream().map(m -> new BatchResult(
        Optional.of(m.documentKey().value()),
        Optional.of(new Analysis("gemini-2.5-flash", Map.of("total", 1.0), null, new Usage(10, 1, 11))),
        Optional.empty())).toList());
    String failing = members.get(150).documentKey().value();
    java.util.concurrent.atomic.AtomicBoolean failedOnce = new java.util.concurrent.atomic.AtomicBoolean();
    when(publisher.publish(eq(TOPIC), any(), anyMap())).thenAnswer(call -> {
      Map<String, String> attributes = call.getArgument(2);
      if (failing.equals(attributes.get("idempotency_key")) && failedOnce.compareAndSet(false, true)) {
        throw new IllegalStateException("Pub/Sub unavailable");
      }
      return "m-1";
    });

    assertThrows(IllegalStateException.class, () -> flow.complete(JOB_KEY));
    assertTrue(ledger.document(Gatherings.COLLECTION, gathering).isEmpty(), "still in flight half-way");
    assertEquals(OutcomeLabel.PROCESSED, flow.complete(JOB_KEY).outcome());

    verify(queries, times(1)).waitingFor(JOB, gathering, ids.subList(0, 100));
    verify(queries, times(1)).waitingFor(JOB, gathering, ids.subList(100, 200));
    verify(queries, times(1)).waitingFor(JOB, gathering, ids.subList(200, 250));
    for (int i = 0; i < 250; i++) {
      IdempotencyKey key = members.get(i).documentKey();
      int expected = i >= 100 && i < 156 ? 2 : 1; // sent again: the second chunk up to its failing wave (8 at once)
      verify(publisher, times(expected)).publish(eq(TOPIC), any(), TestSignatures.keyed(key.value()));
      assertEquals("analysed", ledger.document(Records.ANALYSES, key.documentId()).orElseThrow().get("status"));
    }
    assertEquals(250, ledger.collection(Records.BILLING).size(), "each billed once");
    assertEquals(false, ledger.document(Gatherings.COLLECTION, gathering).orElseThrow().get("inFlight"));
  }
}
