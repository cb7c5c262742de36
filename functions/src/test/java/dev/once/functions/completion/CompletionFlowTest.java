package dev.once.functions.completion;

import static dev.once.pipeline.DocumentStatus.QUEUED;
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
import com.google.genai.types.BatchJobDestination;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.JobError;
import com.google.genai.types.JobState;
import dev.once.budget.DailyBudget;
import dev.once.budget.DaySpend;
import dev.once.budget.Reservation;
import dev.once.budget.SpendCounters;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.TestSignatures;
import dev.once.gemini.Analysis;
import dev.once.gemini.AnswersGone;
import dev.once.gemini.BatchError;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.gemini.JobNames;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.guard.Once;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.EventCounts;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import dev.once.testing.InMemoryLedger;
import dev.once.testing.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A batch job's completion, against the in-memory ledger, with Gemini, the record queries and Pub/Sub mocked. */
class CompletionFlowTest {
  private static final String TOPIC = "projects/p/topics/results";
  private static final int MAX_ATTEMPTS = 3;
  private static final String JOB = "batches/job-1";
  private static final IdempotencyKey JOB_KEY = GeminiCompletionKeys.ofName(JOB);
  private static final IdempotencyKey DOCUMENT = IdempotencyKey.of("gcs:inbox/a.pdf#1");
  private static final DocumentSource SOURCE =
      new DocumentSource("inbox", "a.pdf", 1, "application/pdf", 9, null, null);

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final BatchJobs batchJobs = mock(BatchJobs.class);
  private final RecordQueries queries = mock(RecordQueries.class);
  private final Gatherings gatherings = mock(Gatherings.class);
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final ManualClock clock = new ManualClock(Instant.now());
  private final CompletionFlow flow;

  CompletionFlowTest() {
    Once once = new Once(ledger);
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    flow = new CompletionFlow(once, () -> batchJobs, () -> records, () -> queries, () -> gatherings,
        new ResultPublication(once, () -> publisher, () -> TOPIC, TestSignatures.RESULTS), MAX_ATTEMPTS, clock);
    when(publisher.publish(eq(TOPIC), any(), anyMap())).thenReturn("m-1");
  }

  private static BatchJob job(JobState.Known state) {
    return BatchJob.builder().name(JOB).state(new JobState(state)).build();
  }

  @Test
  void aTestMayMakeChunksSmaller_neverLarger() {
    assertEquals(100, CompletionFlow.chunkSize(null), "100 unless a test asks");
    assertEquals(10, CompletionFlow.chunkSize(10));
    assertEquals(100, CompletionFlow.chunkSize(1000), "never over Firestore's limits");
    assertEquals(1, CompletionFlow.chunkSize(0));
    assertEquals(100, CompletionFlow.CHUNK, "the unit tests run with the default");
  }

  @Test
  void aSucceededJob_isCompletedOnce_billingAndPublishingItsDocument_andTheRepeatCostsNoGeminiCall() {
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB))
        .thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(DOCUMENT.value()),
        Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of("total", 3.0), null, new Usage(100, 10, 110))),
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
    assertEquals("analysed", ledger.document(RecordWrites.ANALYSES, DOCUMENT.documentId()).orElseThrow().get("status"));
    assertEquals(true, ledger.document(RecordWrites.BILLING, DOCUMENT.documentId()).orElseThrow().get("batch"));
  }

  @Test
  void theCompletingCommit_settlesEachDocumentsReservation_toItsBillAtBatchPrice() throws Exception {
    Reservation reserved = new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, Log.stdout(), "gemini budget")
        .reserve(DOCUMENT, 10_000, reason -> SideWrites.NONE);
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, reserved, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(DOCUMENT.value()),
        Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of("total", 3.0), null, new Usage(100, 10, 110))),
        Optional.empty())));

    Report report = flow.complete(JOB_KEY);

    long bill = 28; // (100 × 0.30 + 10 × 2.50) / 2, rounded
    assertEquals(bill, ledger.document(RecordWrites.BILLING, DOCUMENT.documentId()).orElseThrow().get("costMicroUsd"));
    assertEquals(new DaySpend(reserved.day(), bill, 0), new SpendCounters(ledger).read(reserved.day()));
    assertEquals(bill, report.details().get("costMicroUsd"), "the complete line carries the job's cost");
  }

  /** A job that ended without answering: its document goes into another job, keeping its place and reservation. */
  @Test
  void aJobThatEndedWithoutAnswers_sendsItsDocumentBackToTheQueue_keepingItsReservation() throws Exception {
    Reservation reserved = new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, Log.stdout(), "gemini budget")
        .reserve(DOCUMENT, 10_000, reason -> SideWrites.NONE);
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_EXPIRED)));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, reserved, null)));

    Report report = flow.complete(JOB_KEY);

    assertEquals(new DaySpend(reserved.day(), 0, 10_000), new SpendCounters(ledger).read(reserved.day()),
        "kept for the job that answers it");
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, DOCUMENT.documentId()).orElseThrow();
    assertEquals(List.of(QUEUED.value(), 1L), List.of(analysis.get("status"), analysis.get(RecordWrites.RERUNS)));
    assertEquals(1, report.details().get("rerun"));
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aJobStillRunning_isPending_andNothingIsWritten() {
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_RUNNING)));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(JOB_KEY));

    verify(queries, never()).submittedTo(anyString());
    assertTrue(ledger.collection(RecordWrites.ANALYSES).isEmpty());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  /**
   * A job that failed, expired or was cancelled sends its documents into another job, each such job counted: at
   * ONCE_MAX_ATTEMPTS jobs (3 here) the document is given up, failed, saying so, and published once.
   */
  @Test
  void aDocumentWhoseJobsKeepEndingWithoutItsAnswer_isGivenUpAtTheCap_sayingWhy() {
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job(JobState.Known.JOB_STATE_EXPIRED)));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE,
        null, null, MAX_ATTEMPTS - 1, Instant.EPOCH, List.of())));

    Report report = flow.complete(JOB_KEY);
    assertEquals(OutcomeLabel.PROCESSED, report.outcome());
    assertEquals(1L, report.details().get(EventCounts.GIVEN_UP), "its document given up, on the complete line");

    verify(batchJobs, times(1)).results(any());
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, DOCUMENT.documentId()).orElseThrow();
    assertEquals("failed", analysis.get("status"));
    assertEquals("gave up after 3 batch jobs gave it no answer that could be matched to it: the batch job " + JOB
        + " ended JOB_STATE_EXPIRED; no answer of the job names it", analysis.get("reason"));
    assertTrue(ledger.collection(RecordWrites.BILLING).isEmpty());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(DOCUMENT.value()));
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
    BatchJob ours = BatchJob.builder().name(JOB).displayName(JobNames.displayName(DOCUMENT))
        .state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).build();
    when(batchJobs.find(JOB)).thenReturn(Optional.of(ours));
    when(queries.submittedTo(JOB)).thenReturn(List.of());
    when(queries.analysis(DOCUMENT.documentId()))
        .thenReturn(Optional.of(new RecordQueries.AnalysisState(DOCUMENT, DocumentStatus.DEFERRED, null, null)));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(JOB_KEY));
    assertEquals(RecordState.CLAIMED, ledger.lookup(JOB_KEY, Effects.COMPLETE)
        .orElseThrow().state(), "released, to be completed once the document adopted it");

    when(queries.analysis(DOCUMENT.documentId()))
        .thenReturn(Optional.of(
            new RecordQueries.AnalysisState(DOCUMENT, DocumentStatus.SUBMITTED, "batches/job-0", null)));
    assertEquals(OutcomeLabel.REJECTED, flow.complete(JOB_KEY).outcome());

    verify(batchJobs, never()).results(any());
    assertTrue(ledger.collection(RecordWrites.BILLING).isEmpty());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void anAnswerForADocumentWhoseAnalysisNamesAnotherJob_isNeverBilled() {
    BatchJob succeeded = job(JobState.Known.JOB_STATE_SUCCEEDED);
    IdempotencyKey stranger = IdempotencyKey.of("gcs:inbox/other.pdf#9");
    when(batchJobs.find(JOB)).thenReturn(Optional.of(succeeded));
    when(queries.submittedTo(JOB))
        .thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE, null)));
    when(batchJobs.results(succeeded)).thenReturn(List.of(new BatchResult(Optional.of(stranger.value()),
        Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of(), null, new Usage(1, 1, 2))), Optional.empty())));

    flow.complete(JOB_KEY);

    assertTrue(ledger.document(RecordWrites.BILLING, stranger.documentId()).isEmpty(), "the stranger is not billed");
    assertTrue(ledger.document(RecordWrites.ANALYSES, stranger.documentId()).isEmpty());
    Map<String, Object> own = ledger.document(RecordWrites.ANALYSES, DOCUMENT.documentId()).orElseThrow();
    assertEquals(QUEUED.value(), own.get("status"), "the job's own document got no answer: it goes into another job");
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  /**
   * A gathered job of 250 documents: three chunks, each one commit, then its publishes. A publish that fails in the
   * second chunk (its publishes go 8 side by side) stops the completion; the next one resumes there: the first chunk is neither read nor published
   * again, every document is billed once, and the gathering leaves flight only with the last chunk.
   */
  @Test
  void aJobOfManyDocuments_isCompletedInChunks_andResumesWhereItStopped() {
    String gathering = "0123456789abcdef0123456789abcdef";
    BatchJob succeeded = BatchJob.builder().name(JOB).displayName(JobNames.gatheringName(gathering))
        .state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).build();
    List<RecordQueries.Submitted> members = IntStream.range(0, 250)
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
    when(batchJobs.results(succeeded)).thenReturn(members.stream().map(m -> answer(gathering, m, true)).toList());
    String failing = members.get(150).documentKey().value();
    AtomicBoolean failedOnce = new AtomicBoolean();
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
      assertEquals("analysed", ledger.document(RecordWrites.ANALYSES, key.documentId()).orElseThrow().get("status"));
    }
    assertEquals(250, ledger.collection(RecordWrites.BILLING).size(), "each billed once");
    assertEquals(false, ledger.document(Gatherings.COLLECTION, gathering).orElseThrow().get("inFlight"));
    verify(batchJobs, never()).deleteInput(any()); // an inlined job: no input file to delete
  }

  private static final String GATHERING = "fedcba9876543210fedcba9876543210";
  private static final String GATHERED_JOB = "batches/gathered-1";
  private static final IdempotencyKey GATHERED_KEY = GeminiCompletionKeys.ofName(GATHERED_JOB);

  /** A gathered job of {@code count} documents, ended in {@code state}, its gathering as its submission recorded it. */
  private List<RecordQueries.Submitted> gathered(int count, JobState.Known state, String inputFile,
      Function<List<RecordQueries.Submitted>, List<BatchResult>> answers) {
    BatchJob job = BatchJob.builder().name(GATHERED_JOB).displayName(JobNames.gatheringName(GATHERING))
        .state(new JobState(state)).build();
    List<RecordQueries.Submitted> members = IntStream.range(0, count)
        .mapToObj(i -> new RecordQueries.Submitted(IdempotencyKey.of("gcs:inbox/g" + i + ".pdf#1"),
            new DocumentSource("inbox", "g" + i + ".pdf", 1, "application/pdf", 9, null, null), Reservation.NONE,
            GATHERING))
        .toList();
    List<String> ids = members.stream().map(m -> m.documentKey().documentId()).toList();
    when(batchJobs.find(GATHERED_JOB)).thenReturn(Optional.of(job));
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, GATHERED_JOB, ids,
        Map.of(), inputFile, true, null));
    when(queries.waitingFor(anyString(), eq(GATHERING), any())).thenAnswer(call -> {
      List<String> chunk = call.getArgument(2);
      return members.stream().filter(m -> chunk.contains(m.documentKey().documentId())).toList();
    });
    when(batchJobs.results(job)).thenReturn(answers.apply(members));
    return members;
  }

  /** The answer a model gives a member's request: its invoice (its own number), naming its reference. */
  private static BatchResult answer(String gathering, RecordQueries.Submitted member, boolean withKey) {
    String reference = JobNames.reference(gathering, member.documentKey().documentId());
    return new BatchResult(withKey ? Optional.of(member.documentKey().value()) : Optional.empty(),
        Optional.of(reference), Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of("invoiceNumber",
            member.source().name(), "documentReference", reference), null, new Usage(10, 1, 11))),
        Optional.empty());
  }

  private Map<String, Object> analysis(RecordQueries.Submitted member) {
    return ledger.document(RecordWrites.ANALYSES, member.documentKey().documentId()).orElseThrow();
  }

  @SuppressWarnings("unchecked")
  private void assertAnalysedWithItsOwnAnswer(RecordQueries.Submitted member) {
    Map<String, Object> analysis = analysis(member);
    assertEquals("analysed", analysis.get("status"), member.documentKey().value());
    assertEquals(member.source().name(), ((Map<String, Object>) analysis.get("invoice")).get("invoiceNumber"),
        "its own answer");
    assertTrue(ledger.document(RecordWrites.BILLING, member.documentKey().documentId()).isPresent());
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(member.documentKey().value()));
  }

  /**
   * Inlined answers out of request order and without their metadata (python-genai#1909, #2008): each goes to the
   * document whose reference it names; nothing is run again.
   */
  @Test
  void answersShuffledAndWithoutTheirKeys_goEachToTheDocumentTheirReferenceNames() {
    List<RecordQueries.Submitted> members = gathered(4, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> {
      List<BatchResult> answers = new ArrayList<>(all.stream().map(m -> answer(GATHERING, m, false)).toList());
      Collections.reverse(answers);
      return answers;
    });

    Report report = flow.complete(GATHERED_KEY);

    members.forEach(this::assertAnalysedWithItsOwnAnswer);
    assertEquals(Map.of("reference", 4), report.details().get("matched"));
    assertEquals(null, report.details().get("rerun"));
    verify(batchJobs, never()).deleteInput(any()); // inlined: no file to delete
  }

  /**
   * The first two answers filed under each other's key (python-genai#1909's JSONL report): each names its own
   * document's reference, unguessable and new for this job, so each goes to the document it names, wherever it was
   * filed; nothing runs again, nothing is billed to the job alone.
   */
  @Test
  void answersFiledUnderEachOthersKeys_goEachToTheDocumentTheirReferenceNames() {
    List<RecordQueries.Submitted> members = gathered(4, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> {
      List<BatchResult> answers = new ArrayList<>(all.stream().map(m -> answer(GATHERING, m, true)).toList());
      BatchResult first = answers.get(0);
      BatchResult second = answers.get(1);
      answers.set(0, new BatchResult(second.documentKey(), first.reference(), first.analysis(), first.error()));
      answers.set(1, new BatchResult(first.documentKey(), second.reference(), second.analysis(), second.error()));
      return answers;
    });

    Report report = flow.complete(GATHERED_KEY);

    members.forEach(this::assertAnalysedWithItsOwnAnswer);
    assertEquals(Map.of("key_and_reference", 2, "reference_misfiled", 2), report.details().get("matched"));
    assertEquals(null, report.details().get("rerun"));
    assertEquals(null, report.details().get("unattributed"));
  }

  /**
   * Issue 38, item 4: A's error and B's answer filed under each other's keys. B's answer names B: used. A's error
   * came under B's key, in a job whose keys were misfiled: it fails nobody; A runs again.
   */
  @Test
  void anErrorMisfiledUnderAnotherDocumentsKey_failsNobody() {
    List<RecordQueries.Submitted> members = gathered(2, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> List.of(
        BatchResult.failed(Optional.of(all.get(1).documentKey().value()), new BatchError(3, null,
            "Unable to process input image")),
        withKey(answer(GATHERING, all.get(1), true), all.get(0))));

    Report report = flow.complete(GATHERED_KEY);

    assertAnalysedWithItsOwnAnswer(members.get(1));
    assertEquals(List.of(QUEUED.value(), 1L), List.of(analysis(members.get(0)).get("status"),
        analysis(members.get(0)).get(RecordWrites.RERUNS)), "run again, not failed");
    assertEquals(Map.of("reference_misfiled", 1), report.details().get("matched"));
    verify(publisher, never()).publish(eq(TOPIC), any(), TestSignatures.keyed(members.get(0).documentKey().value()));
  }

  private static BatchResult withKey(BatchResult answer, RecordQueries.Submitted member) {
    return new BatchResult(Optional.of(member.documentKey().value()), answer.reference(), answer.analysis(),
        answer.error());
  }

  /**
   * Issue 38, item 3: google.rpc 13 for one request (googleapis/python-genai#1341: up to half a job) is retryable, as
   * sync mode retries the same failure: its document runs again, counted, and is given up only at the cap.
   */
  @Test
  void aRetryableErrorForOneRequest_runsItsDocumentAgain_countedAgainstTheCap() {
    BatchError internal = new BatchError(13, null, "An internal error has occurred. Please retry");
    List<RecordQueries.Submitted> members = gathered(2, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> List.of(
        BatchResult.failed(Optional.of(all.get(0).documentKey().value()), internal),
        answer(GATHERING, all.get(1), true)));

    Report report = flow.complete(GATHERED_KEY);

    Map<String, Object> retried = analysis(members.get(0));
    assertEquals(List.of(QUEUED.value(), 1L), List.of(retried.get("status"), retried.get(RecordWrites.RERUNS)));
    assertTrue(String.valueOf(retried.get("reason")).contains("13 INTERNAL"), String.valueOf(retried.get("reason")));
    assertTrue(ledger.document(RecordWrites.BILLING, members.get(0).documentKey().documentId()).isEmpty(),
        "not billed");
    assertEquals(1, report.details().get("rerun"));
    verify(publisher, never()).publish(eq(TOPIC), any(), TestSignatures.keyed(members.get(0).documentKey().value()));
  }

  /**
   * Issue 38, item 7: a gathering sealed by a version whose requests carried no reference (in flight at an upgrade):
   * its answers, naming none, go by their keys — each billed once, nothing run again.
   */
  @Test
  void aGatheringMadeBeforeReferences_isMatchedByKey_andNothingIsPaidTwice() {
    List<RecordQueries.Submitted> members = gathered(3, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> all.stream()
        .map(m -> new BatchResult(Optional.of(m.documentKey().value()), Optional.empty(), Optional.of(new Analysis(
            "gemini-3.5-flash-lite", Map.of("invoiceNumber", m.source().name()), null, new Usage(10, 1, 11))),
            Optional.empty()))
        .toList());
    List<String> ids = members.stream().map(m -> m.documentKey().documentId()).toList();
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, GATHERED_JOB, ids,
        Map.of(), null, false, null));

    Report report = flow.complete(GATHERED_KEY);

    members.forEach(this::assertAnalysedWithItsOwnAnswer);
    assertEquals(Map.of("key", 3), report.details().get("matched"));
    assertEquals(null, report.details().get("rerun"));
  }

  /** Gemini refused one request inside the job (its own error, under its key): that document fails; others go on. */
  @Test
  void aRequestGeminiRefusedInsideTheJob_failsItsDocumentOnly() {
    List<RecordQueries.Submitted> members = gathered(3, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> List.of(
        BatchResult.failed(Optional.of(all.get(0).documentKey().value()), new BatchError(3, null,
            "Unable to process input image")),
        answer(GATHERING, all.get(1), true), answer(GATHERING, all.get(2), false)));

    flow.complete(GATHERED_KEY);

    Map<String, Object> refused = analysis(members.get(0));
    assertEquals("failed", refused.get("status"));
    assertEquals("Gemini refused its request: Gemini answered its request 3 INVALID_ARGUMENT: Unable to process input"
        + " image", refused.get("reason"));
    assertTrue(ledger.document(RecordWrites.BILLING, members.get(0).documentKey().documentId()).isEmpty());
    members.subList(1, 3).forEach(this::assertAnalysedWithItsOwnAnswer);
  }

  /**
   * A job that expired (or was cancelled) after answering half its requests: those answers are used and billed, the
   * others go into another job; its input file, under the name its submission recorded, is deleted.
   */
  @Test
  void aJobThatExpiredPartWay_usesTheAnswersItGave_andRunsTheRestAgain() {
    List<RecordQueries.Submitted> members = gathered(4, JobState.Known.JOB_STATE_EXPIRED, "files/generated-1a2b",
        all -> all.subList(0, 2).stream().map(m -> answer(GATHERING, m, true)).toList());

    Report report = flow.complete(GATHERED_KEY);

    members.subList(0, 2).forEach(this::assertAnalysedWithItsOwnAnswer);
    for (RecordQueries.Submitted member : members.subList(2, 4)) {
      assertEquals(QUEUED.value(), analysis(member).get("status"));
      assertEquals("the batch job " + GATHERED_JOB + " ended JOB_STATE_EXPIRED; no answer of the job names it",
          analysis(member).get("reason"));
    }
    assertEquals(2, report.details().get("rerun"));
    verify(batchJobs, times(1)).deleteInput("files/generated-1a2b");
  }

  /**
   * A completion taken over from a holder that stopped while its chunk's claim is still live (the chunk's lease
   * outlives the job's): left to that holder before any batches.get, which for an inlined job carries every answer.
   */
  @Test
  void aCompletionTakenOverWhileItsChunkIsStillHeld_asksGeminiNothing() {
    gathered(2, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> all.stream().map(m -> answer(GATHERING, m, true))
        .toList());
    Optional<BatchJob> job = batchJobs.find(GATHERED_JOB);
    org.mockito.Mockito.clearInvocations(batchJobs);
    when(batchJobs.find(GATHERED_JOB)).thenThrow(new IllegalStateException("reset")).thenReturn(job);
    assertThrows(IllegalStateException.class, () -> flow.complete(GATHERED_KEY)); // the job's first try failed
    IdempotencyKey chunk = IdempotencyKey.of(GATHERED_KEY.value() + CompletionFlow.CHUNK_SUFFIX + 0);

    Refusal[] leftToIt = new Refusal[1];
    assertThrows(IllegalStateException.class, () -> new Once(ledger).run(chunk, Effects.COMPLETE,
        attempt -> {
          try {
            flow.complete(GATHERED_KEY); // another process, while this one holds chunk 0
          } catch (Refusal e) {
            leftToIt[0] = e;
          }
          throw new IllegalStateException("the holder stops");
        }));

    assertTrue(leftToIt[0] != null && leftToIt[0].getMessage().contains("held by another process"),
        String.valueOf(leftToIt[0]));
    verify(batchJobs, times(1)).find(GATHERED_JOB);
  }

  /**
   * A job reported succeeded before its output can be read (tidyverse/ellmer#926): not finished yet for an hour
   * after it ended, rather than every document run again and paid twice; past that, it is what it looks like.
   */
  @Test
  void aJobReportedSucceededWithoutItsOutputYet_isNotFinished_forAnHour() {
    BatchJob early = BatchJob.builder().name(JOB).state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED))
        .endTime(Instant.now().minusSeconds(5)).build();
    when(batchJobs.find(JOB)).thenReturn(Optional.of(early));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(DOCUMENT, SOURCE, Reservation.NONE,
        null)));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(JOB_KEY));
    verify(batchJobs, never()).results(any());

    when(batchJobs.find(JOB)).thenReturn(Optional.of(early.toBuilder()
        .endTime(Instant.now().minus(FinishedJobs.ANSWERS_GRACE).minusSeconds(60)).build()));
    assertEquals(OutcomeLabel.PROCESSED, flow.complete(JOB_KEY).outcome());
    assertEquals(QUEUED.value(),
        ledger.document(RecordWrites.ANALYSES, DOCUMENT.documentId()).orElseThrow().get("status"));
  }

  /**
   * Issue 38, item 8: an answer under the document's own key that cannot be verified (no text: thinking used up its
   * bound; a block) was billed by Google: kept on the document — its bill (unused, why), a try on its analysis, its
   * reservation settled to it — and the document runs again, its next job reserving anew; at the cap, the reason says
   * what each billed try returned.
   */
  @Test
  void aBilledAnswerThatCannotBeUsed_isKeptWithItsCost_andTheDocumentGivenUpAtTheCapSaysWhatEachTryReturned()
      throws Exception {
    Reservation reserved = new DailyBudget(ledger, 1_000_000, ZoneOffset.UTC, Log.stdout(), "gemini budget")
        .reserve(DOCUMENT, 10_000, reason -> SideWrites.NONE);
    Analysis noText = new Analysis("gemini-3.5-flash-lite", Map.of(), "the model returned no text",
        new Usage(100, 16_384, 16_484, 16_384));
    List<RecordQueries.Submitted> members = gathered(1, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> List.of(
        new BatchResult(Optional.of(all.get(0).documentKey().value()), Optional.empty(), Optional.of(noText),
            Optional.empty())));
    RecordQueries.Submitted member = new RecordQueries.Submitted(members.get(0).documentKey(),
        members.get(0).source(), reserved, GATHERING);
    when(queries.waitingFor(anyString(), eq(GATHERING), any())).thenReturn(List.of(member));

    flow.complete(GATHERED_KEY);

    long cost = Math.round((100 * 0.30 + 16_384 * 2.50) / 2);
    IdempotencyKey key = member.documentKey();
    Map<String, Object> bill = ledger.document(RecordWrites.BILLING,
        IdempotencyKey.of(key.value() + "#" + GATHERED_JOB).documentId()).orElseThrow();
    assertEquals(List.of(true, cost, key.value()),
        List.of(bill.get("unused"), bill.get("costMicroUsd"), bill.get("key")));
    Map<String, Object> analysis = analysis(member);
    assertEquals(List.of(QUEUED.value(), 1L), List.of(analysis.get("status"), analysis.get(RecordWrites.RERUNS)));
    assertEquals(null, analysis.get("reservation"), "settled: the next job reserves anew");
    assertEquals(new DaySpend(reserved.day(), cost, 0), new SpendCounters(ledger).read(reserved.day()));
    verify(publisher, never()).publish(anyString(), any(), anyMap());

    // Its last job: the same unusable answer, at the cap.
    RecordQueries.Submitted last = member.withReruns(MAX_ATTEMPTS - 1, List.of("batches/earlier: the answer filed"
        + " under its key names no document reference (16384 output tokens, " + cost + " µUSD)"));
    when(queries.waitingFor(anyString(), eq(GATHERING), any())).thenReturn(List.of(last));
    IdempotencyKey again = GeminiCompletionKeys.ofName("batches/gathered-2");
    when(batchJobs.find("batches/gathered-2")).thenReturn(Optional.of(BatchJob.builder().name("batches/gathered-2")
        .displayName(JobNames.gatheringName(GATHERING)).state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED))
        .build()));
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, "batches/gathered-2",
        List.of(key.documentId()), Map.of(), null, true, null));
    when(batchJobs.results(any())).thenReturn(List.of(new BatchResult(Optional.of(key.value()), Optional.empty(),
        Optional.of(noText), Optional.empty())));

    flow.complete(again);

    Map<String, Object> given = analysis(member);
    assertEquals("failed", given.get("status"));
    String reason = String.valueOf(given.get("reason"));
    assertTrue(
        reason.startsWith("gave up after 3 batch jobs") && reason.contains("answers billed to it: batches/earlier")
            && reason.contains("batches/gathered-2: the answer filed under its key names no document reference"),
        reason);
    assertTrue(
        ledger.document(RecordWrites.BILLING, IdempotencyKey.of(key.value() + "#batches/gathered-2").documentId())
            .isPresent(),
        "its last answer billed too");
    verify(publisher, times(1)).publish(eq(TOPIC), any(), TestSignatures.keyed(key.value()));
  }

  /**
   * Issue 38, suspected 1: a finished job whose responses file Gemini no longer has (the Files API keeps files 48
   * hours) is not retried for ever: its documents get no answer from it, and run again, counted.
   */
  @Test
  void aJobWhoseResponsesFileIsGone_sendsItsDocumentsIntoAnotherJob_insteadOfRetryingForEver() {
    List<RecordQueries.Submitted> members =
        gathered(2, JobState.Known.JOB_STATE_SUCCEEDED, "files/in", all -> List.of());
    when(batchJobs.results(any())).thenThrow(new AnswersGone("its responses file files/out cannot be read:"
        + " Gemini answered 404 NOT_FOUND: File not found", null));

    Report report = flow.complete(GATHERED_KEY);

    assertEquals(OutcomeLabel.PROCESSED, report.outcome());
    for (RecordQueries.Submitted member : members) {
      assertEquals(List.of(QUEUED.value(), 1L), List.of(analysis(member).get("status"),
          analysis(member).get(RecordWrites.RERUNS)));
      assertTrue(
          String.valueOf(analysis(member).get("reason")).contains("its responses file files/out cannot be read"));
    }
    assertEquals(false, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("inFlight"));

    // Any other failure to read them is retried, until the job ended longer ago than the Files API keeps a file.
    IdempotencyKey other = GeminiCompletionKeys.ofName("batches/gathered-3");
    BatchJob ended = BatchJob.builder().name("batches/gathered-3").displayName(JobNames.gatheringName(GATHERING))
        .state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).endTime(clock.instant())
        .dest(BatchJobDestination.builder().fileName("files/out-3").build()).build();
    when(batchJobs.find("batches/gathered-3")).thenReturn(Optional.of(ended));
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, "batches/gathered-3",
        members.stream().map(m -> m.documentKey().documentId()).toList(), Map.of(), null, true, null));
    org.mockito.Mockito.doThrow(new IllegalStateException("connection reset")).when(batchJobs).results(ended);
    assertThrows(IllegalStateException.class, () -> flow.complete(other));
    clock.set(clock.instant().plus(FinishedJobs.ANSWERS_KEPT).plusSeconds(60));
    assertEquals(OutcomeLabel.PROCESSED, flow.complete(other).outcome());
  }

  /**
   * Issue 38, suspected 3: a job that FAILED as a whole for what its requests hold (not an outage) sends its members
   * into jobs of half as many, not counted as a try, so one poison document does not use up its companions' tries;
   * alone in a job, a document's failures count.
   */
  @Test
  void aJobThatFailedForWhatItsRequestsHold_isSplit_uncounted_untilADocumentIsAlone() {
    List<RecordQueries.Submitted> members = gathered(4, JobState.Known.JOB_STATE_FAILED, null, all -> List.of());
    BatchJob failed = BatchJob.builder().name(GATHERED_JOB).displayName(JobNames.gatheringName(GATHERING))
        .state(new JobState(JobState.Known.JOB_STATE_FAILED)).error(JobError.builder().code(3)
            .message("Request contains an invalid argument.").build())
        .build();
    when(batchJobs.find(GATHERED_JOB)).thenReturn(Optional.of(failed));
    when(batchJobs.failure(any())).thenReturn(Optional.of(new BatchError(3, null,
        "Request contains an invalid argument.")));

    Report report = flow.complete(GATHERED_KEY);

    for (RecordQueries.Submitted member : members) {
      Map<String, Object> analysis = analysis(member);
      assertEquals(List.of(QUEUED.value(), 0L, 2L), List.of(analysis.get("status"), analysis.get(RecordWrites.RERUNS),
          analysis.get(RecordWrites.JOB_LIMIT)), member.documentKey().value());
    }
    assertEquals(4, report.details().get("rerun"));

    IdempotencyKey alone = GeminiCompletionKeys.ofName("batches/gathered-4");
    when(batchJobs.find("batches/gathered-4")).thenReturn(Optional.of(failed.toBuilder().name("batches/gathered-4")
        .build()));
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, "batches/gathered-4",
        List.of(members.get(0).documentKey().documentId()), Map.of(), null, true, null));
    flow.complete(alone);
    assertEquals(1L, analysis(members.get(0)).get(RecordWrites.RERUNS), "alone, its failure counts");
  }

  /** A job that FAILED in an outage (13 INTERNAL, read from its operation) is not split: each member's try counts. */
  @Test
  void aJobThatFailedInAnOutage_isNotSplit_eachMemberCountsATry() {
    List<RecordQueries.Submitted> members = gathered(4, JobState.Known.JOB_STATE_FAILED, null, all -> List.of());
    when(batchJobs.failure(any())).thenReturn(Optional.of(new BatchError(13, null,
        "An internal error has occurred. Please retry.")));

    flow.complete(GATHERED_KEY);

    for (RecordQueries.Submitted member : members) {
      Map<String, Object> analysis = analysis(member);
      assertEquals(List.of(QUEUED.value(), 1L), List.of(analysis.get("status"), analysis.get(RecordWrites.RERUNS)),
          member.documentKey().value());
      assertEquals(null, analysis.get(RecordWrites.JOB_LIMIT) instanceof Long limit && limit > 0 ? limit : null,
          "no bound on its next job");
    }
  }

  /**
   * Issue 38, suspected 4: a gathered job Gemini says it has no such job for: found in the listing, it is completed;
   * not found, its first such answer is recorded and nothing runs again for an hour (one bogus 404 would send every
   * document of a job that exists into another, billed twice); past it, they run again.
   */
  @Test
  void aBatchesGetNotFound_isBelievedOnlyWhenTheListingAgreesForAnHour() {
    List<RecordQueries.Submitted> members = gathered(2, JobState.Known.JOB_STATE_SUCCEEDED, null,
        all -> all.stream().map(m -> answer(GATHERING, m, true)).toList());
    BatchJob job = batchJobs.find(GATHERED_JOB).orElseThrow();
    when(batchJobs.find(GATHERED_JOB)).thenReturn(Optional.empty());
    when(queries.submittedTo(GATHERED_JOB)).thenReturn(members);
    when(batchJobs.findGathered(GATHERING)).thenReturn(Optional.of(job));

    assertEquals(OutcomeLabel.PROCESSED, flow.complete(GATHERED_KEY).outcome());
    members.forEach(this::assertAnalysedWithItsOwnAnswer);

    IdempotencyKey vanished = GeminiCompletionKeys.ofName("batches/vanished");
    List<String> ids = members.stream().map(m -> m.documentKey().documentId()).toList();
    when(batchJobs.find("batches/vanished")).thenReturn(Optional.empty());
    when(queries.submittedTo("batches/vanished")).thenReturn(members);
    when(batchJobs.findGathered(GATHERING)).thenReturn(Optional.empty());
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, "batches/vanished", ids,
        Map.of(), null, true, null));

    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(vanished));
    assertTrue(ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("notFoundAt") != null,
        "its first sighting recorded");
    when(gatherings.state(GATHERING)).thenReturn(new Gatherings.State(Gatherings.SUBMITTED, "batches/vanished", ids,
        Map.of(), null, true, clock.instant().minusSeconds(600)));
    assertThrows(CompletionFlow.NotFinished.class, () -> flow.complete(vanished), "ten minutes: still looked for");
    clock.set(clock.instant().plus(FinishedJobs.NOT_FOUND_GRACE));
    assertEquals(OutcomeLabel.PROCESSED, flow.complete(vanished).outcome());
    assertEquals(QUEUED.value(), analysis(members.get(0)).get("status"));
  }

  /**
   * Issue 38, item 5: a chunk of 100 invoices whose suppliers the model wrote 12 KB long (anyone can upload such an
   * invoice). Before, the chunk's ledger record (its 100 summaries) passed Firestore's 1 MiB on every try, and the job
   * never completed. Now what the model wrote is bounded: the job completes, the full-length fields are cut (and say
   * so), and every document the commit writes is within Firestore's limit, as the in-memory store checks.
   */
  @Test
  void aChunkOfInvoicesWithHugeModelWrittenFields_completes_eachRecordWithinFirestoresLimit() {
    List<RecordQueries.Submitted> members = gathered(100, JobState.Known.JOB_STATE_SUCCEEDED, null, all -> all.stream()
        .map(m -> {
          String reference = JobNames.reference(GATHERING, m.documentKey().documentId());
          String json = "{\"documentReference\":\"" + reference + "\",\"supplier\":\"" + "Ω".repeat(6_000)
              + "\",\"invoiceNumber\":\"" + "N".repeat(12_000) + "\",\"total\":1}";
          GenerateContentResponse response = GenerateContentResponse
              .fromJson("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":" + quoted(json) + "}]},"
                  + "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":560,"
                  + "\"candidatesTokenCount\":9000}}");
          Analysis analysis = InvoiceAnalyzer.interpret("gemini-3.5-flash-lite", response, null);
          return new BatchResult(Optional.of(m.documentKey().value()), Optional.of(reference), Optional.of(analysis),
              Optional.empty());
        }).toList());

    assertEquals(OutcomeLabel.PROCESSED, flow.complete(GATHERED_KEY).outcome());

    for (RecordQueries.Submitted member : members) {
      Map<String, Object> analysis = analysis(member);
      assertEquals("analysed", analysis.get("status"));
      assertEquals(List.of("supplier", "invoiceNumber"), analysis.get("truncated"));
    }
    org.mockito.ArgumentCaptor<byte[]> sent = org.mockito.ArgumentCaptor.forClass(byte[].class);
    verify(publisher, times(100)).publish(eq(TOPIC), sent.capture(), anyMap());
    String published = new String(sent.getAllValues().get(0), StandardCharsets.UTF_8);
    assertTrue(published.contains("\"truncated\":[\"supplier\",\"invoiceNumber\"]"), published);
    assertTrue(published.length() < 2_000, "a result stays small: " + published.length());
  }

  private static String quoted(String text) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(text);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
