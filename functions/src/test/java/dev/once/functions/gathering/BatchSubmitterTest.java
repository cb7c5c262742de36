package dev.once.functions.gathering;

import static dev.once.pipeline.DocumentStatus.QUEUED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyList;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.genai.errors.ApiException;
import com.google.genai.types.BatchJob;
import dev.once.budget.DailyBudget;
import dev.once.budget.Reservation;
import dev.once.config.Settings;
import dev.once.functions.TestSignatures;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.InputTooLarge;
import dev.once.gemini.PriceTable;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import dev.once.testing.InMemoryLedger;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Batch mode's gathering against the in-memory ledger, with Firestore's queries, Gemini and Storage mocked: when a job
 * is due, and that a gathering's submission makes one paid job whatever fails around it.
 */
class BatchSubmitterTest {
  private static final String GATHERING = "0123456789abcdef0123456789abcdef";
  private static final byte[] PDF = "%PDF-1.4 invoice".getBytes(StandardCharsets.US_ASCII);
  private static final BatchJob JOB = BatchJob.builder().name("batches/job-1").build();

  private volatile Instant now = Instant.parse("2026-12-01T10:00:00Z");
  private final InMemoryLedger ledger = new InMemoryLedger(LedgerOptions.defaults(), () -> now);
  private final Gatherings gatherings = mock(Gatherings.class);
  private final RecordQueries queries = mock(RecordQueries.class);
  private final DocumentReader reader = mock(DocumentReader.class);
  private final BatchJobs batchJobs = mock(BatchJobs.class);
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final List<RecordQueries.Submitted> members = IntStream.range(0, 3).mapToObj(BatchSubmitterTest::member)
      .toList();
  private final BatchSubmitter submitter;
  /** What the submitter logged. */
  private final ByteArrayOutputStream logged = new ByteArrayOutputStream();

  BatchSubmitterTest() throws Exception {
    Once once = new Once(ledger).loggingTo(Log.to(new PrintStream(logged, true,
        StandardCharsets.UTF_8)));
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    submitter = new BatchSubmitter(once, () -> gatherings, () -> queries, () -> records, () -> reader,
        () -> batchJobs,
        new ResultPublication(once, () -> publisher, () -> "projects/p/topics/r", TestSignatures.RESULTS),
        new BatchSubmitter.Limits(3, 100, Duration.ofMinutes(5), 90, Duration.ofSeconds(60), 1 << 20), () -> now);
    when(reader.read(any(), any(Long.class))).thenReturn(PDF);
    when(queries.gatheredIn(GATHERING)).thenReturn(members);
    when(gatherings.seal(anyString(), anyList())).thenAnswer(call -> sealedWith(call.getArgument(1)));
    when(publisher.publish(anyString(), any(), anyMap())).thenReturn("m-1");
  }

  private static RecordQueries.Submitted member(int i) {
    return new RecordQueries.Submitted(IdempotencyKey.of("gcs:inbox/b" + i + ".pdf#1"),
        new DocumentSource("inbox", "b" + i + ".pdf", 1, "application/pdf", PDF.length, null, null), Reservation.NONE,
        GATHERING);
  }

  private static Gatherings.State sealedWith(List<String> members) {
    return new Gatherings.State(Gatherings.OPEN, null, members);
  }

  private RecordQueries.Queued queued(int i, long size, Duration waited) {
    return new RecordQueries.Queued("doc" + i, size, now.minus(waited));
  }

  @Test
  void aJobIsDue_whenFullOfDocuments_orOfBytes_orWhenItsOldestDocumentWaitedLongEnough() {
    Duration young = Duration.ofSeconds(10);
    assertEquals(List.of(), submitter.dueJob(List.of(queued(1, 10, young), queued(2, 10, young))), "neither");
    assertEquals(3, submitter.dueJob(List.of(queued(1, 10, young), queued(2, 10, young), queued(3, 10, young)))
        .size(), "full of documents");
    assertEquals(2, submitter.dueJob(List.of(queued(1, 50, young), queued(2, 50, young), queued(3, 50, young)))
        .size(), "full of bytes: the third would pass 100");
    assertEquals(1, submitter.dueJob(List.of(queued(1, 10, Duration.ofMinutes(5)))).size(), "waited long enough");
    assertEquals(1, submitter.dueJob(List.of(queued(1, 500, young))).size(), "one document larger than a job");
    assertEquals(List.of(), submitter.dueJob(List.of()), "nothing queued");
    assertEquals(1, submitter.dueJob(List.of(new RecordQueries.Queued("back", 10, now.minus(young), 0, 1))).size(),
        "back after a job that gave it no answer: due at once");
  }

  @Test
  void aGathering_isSealed_submittedAsOneJobOfAllItsDocuments_toldOnEach_andOnceOnly() {
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenReturn(JOB);

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));
    assertInstanceOf(Outcome.Duplicate.class, submitter.submit(GATHERING));

    verify(batchJobs, times(1)).submit(eq(GATHERING), any(), any(), any());
    verify(batchJobs, never()).findGathered(any());
    var order = org.mockito.Mockito.inOrder(gatherings, batchJobs);
    order.verify(gatherings).seal(GATHERING, members.stream().map(m -> m.documentKey().documentId()).toList());
    order.verify(batchJobs).submit(eq(GATHERING), anyList(), any(), any());
    order.verify(gatherings).markSubmitted("batches/job-1", members);
    assertTrue(ledger.collection(RecordWrites.ANALYSES).isEmpty(), "the documents are not in the submission's commit");
    Map<String, Object> gathering = ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow();
    assertEquals(List.of(Gatherings.SUBMITTED, "batches/job-1", 3),
        List.of(gathering.get("state"), gathering.get("job"), gathering.get("documents")));
  }

  @Test
  void aDueJob_isOpened_givenItsDocuments_thenSubmitted() {
    when(queries.queued(anyInt())).thenReturn(List.of(queued(0, 10, Duration.ofMinutes(6))),
        List.of(queued(0, 10, Duration.ofMinutes(6))), List.of());
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.OPENED);
    when(gatherings.assign(anyString(), eq(List.of(queued(0, 10, Duration.ofMinutes(6)))))).thenReturn(1);
    when(queries.gatheredIn(anyString())).thenReturn(members);
    when(batchJobs.submit(anyString(), anyList(), any(), any())).thenReturn(JOB);

    assertEquals(1, submitter.submitDue());

    var order = org.mockito.Mockito.inOrder(gatherings, queries, batchJobs);
    order.verify(gatherings).open(anyString(), eq(90), any());
    order.verify(gatherings).assign(anyString(), eq(List.of(queued(0, 10, Duration.ofMinutes(6)))));
    order.verify(queries).gatheredIn(anyString());
    order.verify(batchJobs).submit(anyString(), anyList(), any(), any());
  }

  @Test
  void aGatheringThatLostItsDocumentsToAnother_isClosed_withoutASubmission() {
    // The other submitter's gathering holds the document: the queue, read again, no longer lists it.
    when(queries.queued(anyInt())).thenReturn(List.of(queued(0, 10, Duration.ofMinutes(6))), List.of());
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.OPENED);

    assertEquals(0, submitter.submitDue());

    verify(gatherings, times(1)).close(anyString());
    verify(queries, never()).gatheredIn(anyString());
    verify(batchJobs, never()).submit(anyString(), anyList(), any(), any());
  }

  /**
   * The oldest document changed between the queue's read and its assignment (the conditional update failed), so the
   * gathering holds none; the submitters beside it stopped for its place under the cap. Seen in a run of
   * BatchBurstEndToEndTest: the due job waited for the reconciler. The queue is read again and the job made.
   */
  @Test
  void aGatheringThatHeldNone_whileTheJobIsStillQueued_isClosed_andTheJobMadeAgain() {
    List<RecordQueries.Queued> due = List.of(queued(0, 10, Duration.ofMinutes(6)));
    when(queries.queued(anyInt())).thenReturn(due, due, due, due, List.of());
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.OPENED);
    when(gatherings.assign(anyString(), eq(due))).thenReturn(0, 1);
    when(queries.gatheredIn(anyString())).thenReturn(members);
    when(batchJobs.submit(anyString(), anyList(), any(), any())).thenReturn(JOB);

    assertEquals(1, submitter.submitDue());

    verify(gatherings, times(2)).open(anyString(), eq(90), any());
    verify(gatherings, times(1)).close(anyString());
    verify(batchJobs, times(1)).submit(anyString(), anyList(), any(), any());
  }

  @Test
  void gatheringsThatKeepHoldingNone_areGivenUpAfterAFew() {
    when(queries.queued(anyInt())).thenReturn(List.of(queued(0, 10, Duration.ofMinutes(6))));
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.OPENED);

    assertEquals(0, submitter.submitDue());

    verify(gatherings, times(BatchSubmitter.MAX_LOST)).close(anyString());
    verify(batchJobs, never()).submit(anyString(), anyList(), any(), any());
  }

  @Test
  void theRequestsOfAJob_areItsDocumentsKeyedByTheirKeys() {
    List<List<BatchJobs.Request>> sent = new ArrayList<>();
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenAnswer(call -> {
      sent.add(call.getArgument(1));
      return JOB;
    });
    submitter.submit(GATHERING);
    assertEquals(members.stream().map(RecordQueries.Submitted::documentKey).toList(),
        sent.get(0).stream().map(BatchJobs.Request::documentKey).toList());
  }

  /**
   * An answer from batches.create that does not prove nothing was made (late, reset, 5xx, 429): the retry looks for
   * the job by the gathering's display name and adopts it, so there is one paid job.
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"503, UNAVAILABLE", "429, RESOURCE_EXHAUSTED", "500, INTERNAL", "0, timeout"})
  void anAmbiguousSubmission_isRetriedOnlyAfterLookingForTheJob_andAdoptsIt(int code, String status) {
    RuntimeException failure = code == 0
        ? new UncheckedIOException(new SocketTimeoutException("read timed out"))
        : new ApiException(code, status, "the answer does not say whether the job exists");
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenThrow(failure);
    when(batchJobs.findGathered(GATHERING)).thenReturn(Optional.of(JOB));

    assertThrows(RuntimeException.class, () -> submitter.submit(GATHERING));
    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    verify(batchJobs, times(1)).submit(eq(GATHERING), any(), any(), any());
    verify(batchJobs, times(1)).findGathered(GATHERING);
    assertEquals("batches/job-1", ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("job"));
  }

  /**
   * A retry goes by the members an earlier try sealed (which may have made the job with them): a document gathered
   * since (a stalled opener's) is not sent.
   */
  @Test
  void aRetry_sendsTheMembersTheFirstTrySealed_notADocumentGatheredSince() {
    List<String> sealed = members.subList(0, 2).stream().map(m -> m.documentKey().documentId()).toList();
    when(gatherings.seal(eq(GATHERING), anyList())).thenReturn(sealedWith(sealed));
    List<List<BatchJobs.Request>> sent = new ArrayList<>();
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenAnswer(call -> {
      sent.add(call.getArgument(1));
      return JOB;
    });

    submitter.submit(GATHERING);

    assertEquals(members.subList(0, 2).stream().map(RecordQueries.Submitted::documentKey).toList(),
        sent.get(0).stream().map(BatchJobs.Request::documentKey).toList());
    assertEquals(2, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("documents"));
  }

  /** Gemini without room (429) however often: the documents wait in their gathering, none is failed. */
  @Test
  void aJobGeminiHasNoRoomFor_waits_andNoDocumentFails() {
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any()))
        .thenThrow(new ApiException(429, "RESOURCE_EXHAUSTED", "too many concurrent batch jobs"));
    when(batchJobs.findGathered(GATHERING)).thenReturn(Optional.empty());

    for (int i = 0; i < 12; i++) {
      assertThrows(ApiException.class, () -> submitter.submit(GATHERING));
    }
    verify(batchJobs, times(12)).submit(eq(GATHERING), any(), any(), any());
    verify(batchJobs, times(11)).findGathered(GATHERING);
    assertTrue(ledger.document(RecordWrites.ANALYSES, members.get(0).documentKey().documentId()).isEmpty(),
        "no document failed");
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aRefusalThatRulesTheJobOut_isRetriedWithoutALook() {
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any()))
        .thenThrow(new ApiException(401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."))
        .thenReturn(JOB);

    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> submitter.submit(GATHERING)).kind());
    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));
    verify(batchJobs, never()).findGathered(any());
  }

  @Test
  void aDocumentGoneBeforeItsJobIsMade_isRefusedAndPublished_theOthersGoInTheJob() throws Exception {
    when(reader.read(eq(members.get(1).source()), any(Long.class)))
        .thenThrow(new DocumentReader.Gone("the document is gone"));
    List<List<BatchJobs.Request>> sent = new ArrayList<>();
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenAnswer(call -> {
      sent.add(call.getArgument(1));
      return JOB;
    });

    submitter.submit(GATHERING);

    assertEquals(2, sent.get(0).size());
    assertEquals("rejected",
        ledger.document(RecordWrites.ANALYSES, members.get(1).documentKey().documentId()).orElseThrow().get("status"));
    verify(publisher, times(1)).publish(anyString(), any(),
        TestSignatures.keyed(members.get(1).documentKey().value()));
    verify(publisher, times(1)).publish(anyString(), any(), anyMap());
  }

  /**
   * A refusal is published before the commit that records it: once that commit lands nothing runs the submission
   * again, so a crash between the two would have left it unpublished. A publish that fails leaves nothing recorded.
   */
  @Test
  void aRefusal_isPublishedBeforeTheCommitRecordingIt_andAFailedPublishLeavesTheSubmissionToRetry() throws Exception {
    when(reader.read(eq(members.get(1).source()), any(Long.class)))
        .thenThrow(new DocumentReader.Gone("the document is gone"));
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenReturn(JOB);
    String refused = members.get(1).documentKey().documentId();
    List<Object> statusWhenPublished = new ArrayList<>();
    when(publisher.publish(anyString(), any(), anyMap()))
        .thenThrow(new IllegalStateException("Pub/Sub unavailable"))
        .thenAnswer(call -> {
          statusWhenPublished
              .add(ledger.document(RecordWrites.ANALYSES, refused).map(d -> d.get("status")).orElse("none"));
          return "m-2";
        });

    assertThrows(RuntimeException.class, () -> submitter.submit(GATHERING));
    assertTrue(ledger.document(RecordWrites.ANALYSES, refused).isEmpty(),
        "nothing recorded while the refusal is unpublished");
    verify(batchJobs, never()).submit(anyString(), anyList(), any(), any());

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));
    assertEquals(List.of("none"), statusWhenPublished, "published before the commit recorded the refusal");
    assertEquals("rejected", ledger.document(RecordWrites.ANALYSES, refused).orElseThrow().get("status"));
    verify(batchJobs, times(1)).submit(eq(GATHERING), anyList(), any(), any());
    verify(publisher, times(2)).publish(anyString(), any(), TestSignatures.keyed(members.get(1).documentKey().value()));
  }

  @Test
  void aGatheringWhoseDocumentsAllWentElsewhere_makesNoJob_andLeavesFlight() {
    when(queries.gatheredIn(GATHERING)).thenReturn(List.of());
    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));
    verify(batchJobs, never()).submit(anyString(), anyList(), any(), any());
    assertEquals(false, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("inFlight"));
  }

  @Test
  void anUpload_readsAJobsWorthOfTheQueue_onlyWhenAJobIsDue() {
    when(queries.queued(1)).thenReturn(List.of(queued(0, 10, Duration.ofSeconds(10))));
    when(queries.queuedCount(3)).thenReturn(2L);
    assertEquals(0, submitter.submitIfDue());
    verify(queries, never()).queued(3);

    when(queries.queuedCount(3)).thenReturn(3L);
    submitter.submitIfDue();
    verify(queries, times(1)).queued(3);

    now = now.plus(Duration.ofMinutes(5)); // the oldest has waited long enough
    when(queries.queuedCount(3)).thenReturn(1L);
    submitter.submitIfDue();
    verify(queries, times(2)).queued(3);
  }

  /**
   * Issue 40: the due check costs an upload one read, a count of the queue. The oldest queued document is read again
   * only once the oldest this instance knows of may have waited long enough: none queued later can have waited more.
   */
  @Test
  void anUploadsDueCheck_isACountAlone_untilTheOldestDocumentItKnowsOfMayHaveWaitedLongEnough() {
    when(queries.queued(1)).thenReturn(List.of(queued(0, 10, Duration.ofSeconds(10))));
    when(queries.queuedCount(3)).thenReturn(1L);
    submitter.submitIfDue();
    verify(queries, times(1)).queued(1);
    verify(queries, times(1)).queuedCount(3);

    for (int upload = 0; upload < 5; upload++) {
      now = now.plus(Duration.ofSeconds(57)); // 4 min 55 s of its 5 min wait in all
      assertEquals(0, submitter.submitIfDue());
    }
    verify(queries, times(1)).queued(1);
    verify(queries, times(6)).queuedCount(3);

    now = now.plus(Duration.ofSeconds(10));
    submitter.submitIfDue();
    verify(queries, times(2)).queued(1);
    verify(queries, times(6)).queuedCount(3);
    verify(gatherings, times(1)).open(anyString(), anyInt(), any());
  }

  /** Submitters that read the same oldest document open the same gathering: the one that did not open it stops. */
  @Test
  void aSubmitterWhoseGatheringAnotherOpened_leavesTheJobToIt_withoutReadingTheQueue() {
    when(queries.queued(1)).thenReturn(List.of(queued(0, 10, Duration.ofMinutes(6))));
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.TAKEN);

    assertEquals(0, submitter.submitDue());

    verify(gatherings, times(1)).open(eq(Gatherings.nameFor(queued(0, 10, Duration.ofMinutes(6)))), eq(90), any());
    verify(queries, never()).queued(3);
    verify(gatherings, never()).assign(anyString(), anyList());
  }

  /** A gathering named after the oldest document ended without it (closed empty): the job goes in another. */
  @Test
  void aGatheringOfTheOldestDocumentThatEnded_givesWayToOneOfAnotherName() {
    List<RecordQueries.Queued> due = List.of(queued(0, 10, Duration.ofMinutes(6)));
    when(queries.queued(anyInt())).thenReturn(due, due, List.of());
    String named = Gatherings.nameFor(due.get(0));
    when(gatherings.open(anyString(), eq(90), any())).thenAnswer(call -> named.equals(call.getArgument(0))
        ? Gatherings.Opening.ENDED : Gatherings.Opening.OPENED);
    when(gatherings.assign(anyString(), eq(due))).thenReturn(1);
    when(queries.gatheredIn(anyString())).thenReturn(members);
    when(batchJobs.submit(anyString(), anyList(), any(), any())).thenReturn(JOB);

    assertEquals(1, submitter.submitDue());

    verify(gatherings, times(2)).open(anyString(), eq(90), any());
    verify(gatherings, never()).assign(eq(named), anyList());
  }

  /** A gathering whose resumed submission keeps failing must not keep the reconciler from the others (review, issue 40). */
  @Test
  void aGatheringWhoseResumeFails_leavesTheOthersToBeResumed() {
    Instant longAgo = now.minus(Duration.ofHours(1));
    when(gatherings.unsubmitted(90)).thenReturn(List.of(new Gatherings.Unsubmitted("broken", longAgo),
        new Gatherings.Unsubmitted(GATHERING, longAgo)));
    when(queries.gatheredIn("broken")).thenThrow(new IllegalStateException("a member cannot be read"));
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenReturn(JOB);

    assertEquals(1, submitter.resumeUnsubmitted());
    verify(batchJobs, times(1)).submit(eq(GATHERING), anyList(), any(), any());
  }

  @Test
  void noRoomForAnotherJob_leavesTheQueueAlone() {
    when(queries.queued(anyInt())).thenReturn(List.of(queued(1, 10, Duration.ofMinutes(6))));
    when(gatherings.open(anyString(), eq(90), any())).thenReturn(Gatherings.Opening.FULL);

    assertEquals(0, submitter.submitDue());
    verify(gatherings, never()).assign(anyString(), anyList());
    verify(batchJobs, never()).submit(anyString(), anyList(), any(), any());
  }

  /**
   * Review defect 1: a member refused (gone) by a try whose batches.create then answered ambiguously. The retry adopts
   * the job, which holds no request of it: it is left out of the job (not told it, not counted), recorded refused
   * again, and its refusal — published by the first try — is not published a second time.
   */
  @Test
  void aMemberRefusedBeforeAnAmbiguousCreate_isLeftOutOfTheAdoptedJob_andPublishedOnce() throws Exception {
    when(reader.read(eq(members.get(1).source()), any(Long.class)))
        .thenThrow(new DocumentReader.Gone("the document is gone"));
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any()))
        .thenThrow(new ApiException(503, "UNAVAILABLE", "The model is overloaded."));
    when(batchJobs.findGathered(GATHERING)).thenReturn(Optional.of(JOB));
    List<Map<String, String>> recorded = new ArrayList<>();
    org.mockito.Mockito.doAnswer(call -> recorded.add(call.getArgument(1))).when(gatherings)
        .refuse(eq(GATHERING), anyMap());
    assertThrows(ApiException.class, () -> submitter.submit(GATHERING));
    // The gathering as the first try left it: sealed, and the refusal recorded before batches.create.
    List<String> ids = members.stream().map(m -> m.documentKey().documentId()).toList();
    when(gatherings.seal(eq(GATHERING), anyList()))
        .thenReturn(new Gatherings.State(Gatherings.OPEN, null, ids, recorded.get(0), null, true, null));

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    assertEquals(Map.of(members.get(1).documentKey().documentId(), "gone"), recorded.get(0),
        "the gathering keeps the kind of it: bounded however long Google's words");
    verify(gatherings).markSubmitted("batches/job-1", List.of(members.get(0), members.get(2)));
    assertEquals(2, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("documents"));
    assertEquals("rejected",
        ledger.document(RecordWrites.ANALYSES, members.get(1).documentKey().documentId()).orElseThrow().get("status"));
    verify(publisher, times(1)).publish(anyString(), any(), anyMap());
  }

  /**
   * Review defect 2: batches.create refuses a job a little over the inline limit (400 "Request payload size exceeds
   * the limit"). The job's fault, not its members': the same requests go from an input file, no member is refused.
   */
  @Test
  void aJobRefusedAsTooLargeInlined_isMadeFromAnInputFile_andNoMemberIsRefused() {
    when(batchJobs.submit(eq(GATHERING), anyList(), eq(BatchJobs.Input.INLINED_WHEN_SMALL), any()))
        .thenThrow(
            new ApiException(400, "INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes."));
    when(batchJobs.submit(eq(GATHERING), anyList(), eq(BatchJobs.Input.FILE), any())).thenReturn(JOB);

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    verify(batchJobs, times(1)).submit(eq(GATHERING), anyList(), eq(BatchJobs.Input.FILE), any());
    verify(gatherings).markSubmitted("batches/job-1", members);
    assertTrue(ledger.collection(RecordWrites.ANALYSES).isEmpty(), "no member refused");
    verify(publisher, never()).publish(anyString(), any(), anyMap());
    assertLoggedRefusal("Request payload size exceeds the limit: 20971520 bytes.");
  }

  /**
   * Refused as too large even from a file (or for what one of its documents holds, without saying which): its members
   * go back to the queue for jobs of at most half as many, none refused, the gathering out of flight; a document
   * alone in a job refused so is refused itself.
   */
  @Test
  void aJobRefusedAsTooLargeFromAFile_sendsItsMembersBackToTheQueueForSmallerJobs() {
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any()))
        .thenThrow(new ApiException(413, "", "Request Entity Too Large"));

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    for (RecordQueries.Submitted member : members) {
      Map<String, Object> analysis =
          ledger.document(RecordWrites.ANALYSES, member.documentKey().documentId()).orElseThrow();
      assertEquals(List.of(QUEUED.value(), 2L, 0L),
          List.of(analysis.get("status"), analysis.get(RecordWrites.JOB_LIMIT),
              analysis.get(RecordWrites.RERUNS)),
          "queued again for a job of at most 2, no try counted");
    }
    assertEquals(false, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("inFlight"));
    verify(publisher, never()).publish(anyString(), any(), anyMap());
    assertLoggedRefusal("Request Entity Too Large");
    assertEquals(2,
        submitter.dueJob(List.of(new RecordQueries.Queued("d0", 10, now, 2, 0), queued(1, 10, Duration.ZERO),
            queued(2, 10, Duration.ZERO))).size(),
        "the next job holding it takes at most 2");
  }

  /**
   * A refusal that names one request is that document's: it is refused, and the job is made of the others. Its
   * gathering keeps the kind of refusal, not Google's message, however long (issue 38: 5,000 members' refusals stay
   * inside a document's 1 MiB); the member's analysis keeps the message, bounded.
   */
  @Test
  void aRefusalNamingOneRequest_refusesThatDocument_andTheJobIsMadeOfTheOthers() {
    List<List<BatchJobs.Request>> sent = new ArrayList<>();
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenAnswer(call -> {
      sent.add(List.copyOf(call.<List<BatchJobs.Request>>getArgument(1)));
      if (sent.size() == 1) {
        throw new ApiException(400, "INVALID_ARGUMENT", "* BatchGenerateContentRequest.batch.input_config.requests"
            + ".requests[1].request.contents[0].parts[0].inline_data: Unable to process input image "
            + "x".repeat(100_000));
      }
      return JOB;
    });

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    assertEquals(List.of(members.get(0).documentKey(), members.get(2).documentKey()),
        sent.get(1).stream().map(BatchJobs.Request::documentKey).toList());
    String refusedId = members.get(1).documentKey().documentId();
    Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, refusedId).orElseThrow();
    assertEquals("rejected", analysis.get("status"));
    verify(publisher, times(1)).publish(anyString(), any(), TestSignatures.keyed(members.get(1).documentKey().value()));
    verify(gatherings).markSubmitted("batches/job-1", List.of(members.get(0), members.get(2)));
    verify(gatherings).refuse(GATHERING, Map.of(refusedId, JobRequests.Refused.BY_GEMINI));
    String reason = String.valueOf(analysis.get("reason"));
    assertTrue(reason.contains("Unable to process input image")
        && reason.length() <= RecordWrites.MAX_TEXT_CHARS + 1, reason.length() + " chars");
  }

  /**
   * A document run again (an earlier job gave it no answer that could be matched to it) goes in a job made from an
   * input file, whose lines come back keyed; the file's name is recorded on the gathering before batches.create.
   */
  @Test
  void aJobHoldingADocumentRunAgain_isMadeFromAnInputFile_whoseNameIsRecorded() {
    RecordQueries.Submitted rerun = new RecordQueries.Submitted(members.get(0).documentKey(), members.get(0).source(),
        Reservation.NONE, GATHERING, null, 1, now, List.of());
    when(queries.gatheredIn(GATHERING)).thenReturn(List.of(rerun, members.get(1)));
    when(batchJobs.submit(eq(GATHERING), anyList(), eq(BatchJobs.Input.FILE), any())).thenAnswer(call -> {
      call.<Consumer<Optional<String>>>getArgument(3).accept(Optional.of("files/generated-9z"));
      return JOB;
    });

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    verify(gatherings).recordInput(GATHERING, "files/generated-9z");
  }

  /** Each refusal of the whole job is logged, as a warning carrying Google's own message. */
  private void assertLoggedRefusal(String googlesMessage) {
    List<String> lines = logged.toString(StandardCharsets.UTF_8).lines()
        .filter(line -> line.contains("batches.create refused the whole job")).toList();
    assertTrue(!lines.isEmpty() && lines.stream().allMatch(line -> line.contains("\"WARNING\"")
        && line.contains(GATHERING) && line.contains(googlesMessage)), "logged with Google's message: " + lines);
  }

  /**
   * Issue 38, item 8: a member whose reservation was settled to an answer Google billed that could not be used
   * reserves again for its next job, as its first queueing did; a day that cannot take it leaves it in the queue,
   * uncounted, out of the job.
   */
  @Test
  void aMemberRunAgainWithoutAReservation_reservesForItsNextJob_orWaitsInTheQueueForTheBudget() {
    Once once = new Once(ledger);
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    DailyBudget budget = new DailyBudget(ledger, 100_000, ZoneOffset.UTC,
        Log.to(new PrintStream(OutputStream.nullOutputStream())), "gemini budget");
    CostEstimator estimator = mock(CostEstimator.class);
    when(estimator.ceiling(true)).thenReturn(OptionalLong.empty());
    when(estimator.microUsd(any(), anyString(), eq(true))).thenReturn(60_000L);
    BatchSubmitter budgeted = new BatchSubmitter(once, () -> gatherings, () -> queries, () -> records, () -> reader,
        () -> batchJobs,
        new ResultPublication(once, () -> publisher, () -> "projects/p/topics/r", TestSignatures.RESULTS),
        new BatchSubmitter.Limits(3, 100, Duration.ofMinutes(5), 90, Duration.ofSeconds(60), 1 << 20), () -> now,
        budget, () -> estimator);
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any())).thenReturn(JOB);

    assertInstanceOf(Outcome.Processed.class, budgeted.submit(GATHERING));

    org.mockito.ArgumentCaptor<List<BatchJobs.Request>> requests = org.mockito.ArgumentCaptor.forClass(List.class);
    verify(batchJobs).submit(eq(GATHERING), requests.capture(), any(), any());
    assertEquals(1, requests.getValue().size(), "the day takes one estimate of 60,000 of its 100,000");
    Map<String, Object> first = ledger.document(RecordWrites.ANALYSES, members.get(0).documentKey().documentId())
        .orElseThrow();
    assertEquals(60_000L, ((Map<?, ?>) first.get("reservation")).get("microUsd"), "reserved, for its completion");
    for (RecordQueries.Submitted waiting : members.subList(1, 3)) {
      Map<String, Object> analysis = ledger.document(RecordWrites.ANALYSES, waiting.documentKey().documentId())
          .orElseThrow();
      assertEquals(QUEUED.value(), analysis.get("status"));
      assertTrue(String.valueOf(analysis.get("reason")).startsWith("waiting for the day's budget"));
      assertEquals(0L, analysis.get(RecordWrites.RERUNS), "not counted as a try");
    }
  }

  /**
   * Issue 38, suspected 2: a job whose input file would pass the Files API's 2 GB is neither uploaded nor retried as it
   * is for ever: its members go into jobs of half as many, none refused.
   */
  @Test
  void aJobWhoseInputFileWouldBeTooLarge_isSplit_andNoMemberIsRefused() {
    when(batchJobs.submit(eq(GATHERING), anyList(), any(), any()))
        .thenThrow(new InputTooLarge("the job's requests would be 2100000000 bytes of JSONL"));

    assertInstanceOf(Outcome.Processed.class, submitter.submit(GATHERING));

    for (RecordQueries.Submitted member : members) {
      Map<String, Object> analysis =
          ledger.document(RecordWrites.ANALYSES, member.documentKey().documentId()).orElseThrow();
      assertEquals(List.of(QUEUED.value(), 2L), List.of(analysis.get("status"), analysis.get(RecordWrites.JOB_LIMIT)));
    }
    verify(publisher, never()).publish(anyString(), any(), anyMap());
    assertEquals(Gatherings.DONE, ledger.document(Gatherings.COLLECTION, GATHERING).orElseThrow().get("state"));
  }
}
