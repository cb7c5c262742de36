package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.UploadFileConfig;
import dev.once.budget.Budget;
import dev.once.budget.Reservation;
import dev.once.config.Lazy;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.functions.completion.CompletionFlow;
import dev.once.functions.completion.StrayJobs;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.functions.reconcile.ReconcileFlow;
import dev.once.functions.reconcile.ReconcileSummary;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Completion;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.gemini.WebhookMode;
import dev.once.local.http.AmbiguousFailure;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.ResultPublication;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The reconciler finds the pipeline's own waiting documents by itself, so a finished job is completed even when
 * the listing never shows it (here: a listing cut to one job, as a busy project's would cut it to a thousand).
 */
class ReconcileFlowTest {
  private static final String PROJECT = "once-reconcile-test";
  private static GeminiStandIn gemini;
  private static Clients clients;

  @BeforeAll
  static void start() throws Exception {
    gemini = GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookMode(WebhookMode.NEVER));
    String pubsub = PubSubEmulator.shared().hostPort();
    try (PubSubAdmin admin = new PubSubAdmin(pubsub)) {
      admin.createTopic("projects/" + PROJECT + "/topics/results");
    }
    clients = new Clients(Settings.of(Map.of(
        "GOOGLE_CLOUD_PROJECT", PROJECT,
        "FIRESTORE_EMULATOR_HOST", FirestoreEmulator.shared().hostPort(),
        "PUBSUB_EMULATOR_HOST", pubsub,
        "GEMINI_API_KEY", "test-key",
        "GEMINI_BASE_URL", gemini.baseUrl(),
        "GEMINI_TIMEOUT_SECONDS", "10",
        "RESULTS_TOPIC", "results",
        "RESULTS_SIGNING_KEY", TestSignatures.RESULTS_KEY)));
  }

  @AfterAll
  static void stop() {
    gemini.close();
    clients.publisher.get().close();
  }

  @Test
  void finishedJobsOfWaitingDocuments_areCompleted_evenWhenTheListingShowsFewOfThem() throws Exception {
    Firestore db = clients.firestore.get();
    List<IdempotencyKey> documents = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      documents.add(submitFinished("doc-" + i).document());
    }

    long endedGets = gemini.count("batches.get.ended");
    ReconcileSummary first = reconciler().run();

    assertEquals(3, first.processed, "every waiting document's job was completed: " + first.toMap());
    assertTrue(first.seen >= 1 && first.pendingChecked >= 2, "the listing showed one, the second pass looked up the"
        + " others: " + first.toMap());
    assertEquals(endedGets + 3, gemini.count("batches.get.ended"), "one look at each ended job, not a second");
    for (IdempotencyKey document : documents) {
      assertEquals("analysed",
          db.collection("analyses").document(document.documentId()).get().get().getString("status"));
      assertTrue(db.collection("billing").document(document.documentId()).get().get().exists());
    }
    ReconcileSummary second = reconciler().run();
    assertEquals(0, second.processed, "nothing is left: " + second.toMap());
  }

  @Test
  void aCompletionHeldByAnotherProcess_isLeftToIt_withoutAGeminiCall() throws Exception {
    Submitted held = submitFinished("held");
    IdempotencyKey jobKey = GeminiCompletionKeys.ofName(held.job());
    long gets = gemini.count("batches.get");
    ReconcileSummary[] during = new ReconcileSummary[1];
    // Another process (here: this test) claims the job's completion, and the reconciler runs while it holds it.
    RuntimeException holderFailed =
        assertThrows(IllegalStateException.class, () -> clients.once.run(jobKey, Effects.COMPLETE, attempt -> {
          during[0] = reconciler().run();
          throw new IllegalStateException("the holder fails, releasing its claim");
        }));

    assertTrue(during[0].inFlight >= 1, during[0].toMap().toString());
    assertEquals(gets, gemini.count("batches.get"), "the held job was not looked up: " + holderFailed);
    ReconcileSummary after = reconciler().run();
    assertEquals(1, after.processed, "released, the job is the reconciler's to complete: " + after.toMap());
    assertEquals("analysed",
        clients.firestore.get().collection("analyses").document(held.document().documentId()).get().get()
            .getString("status"));
  }

  /**
   * A waiting document whose job Gemini no longer has gets no answer from it: it goes back to the queue, and the same
   * run makes it a new job (it waited a whole job already), from an input file.
   */
  @Test
  void aWaitingDocumentWhoseJobGeminiNoLongerHas_goesIntoANewJob_sayingWhy() throws Exception {
    Submitted gone = submitFinished("gone");
    clients.gemini.get().batches.delete(gone.job(), null);
    MessagePublisher publisher = mock(MessagePublisher.class);
    when(publisher.publish(any(), any(), any())).thenReturn("m-1");

    ReconcileSummary run = resumingReconciler(publisher, InstantSource.system()).run();

    assertTrue(run.processed >= 1 && run.jobsSubmitted >= 1, run.toMap().toString());
    var analysis = clients.firestore.get().collection("analyses").document(gone.document().documentId()).get().get();
    assertEquals(List.of("submitted", 1L), List.of(analysis.getString("status"), analysis.getLong("reruns")));
    assertEquals("Gemini has no batch job " + gone.job() + "; no answer of the job names it",
        analysis.getString("reason"));
    String second = analysis.getString("job");
    assertTrue(!gone.job().equals(second) && gemini.requests(second).get(0).has("key"), "a new job, from a file");
    verify(publisher, times(0)).publish(any(), any(), any());
    gemini.finish(second, BatchState.SUCCEEDED);
    resumingReconciler(publisher, InstantSource.system()).run();
    assertEquals("analysed", analysis(gone.document()).getString("status"));
  }

  /**
   * Review defect 3: a running gathered job whose gathering recorded another job (an earlier try made it, the retry
   * adopted another of the same name) is a stray: the reconciler cancels it, so it is not paid for to the end.
   */
  @Test
  void aRunningGatheredJobItsGatheringDisowns_isCancelledAsAStray() throws Exception {
    String gathering = UUID.randomUUID().toString().replace("-", "");
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/reconcile/stray-" + System.nanoTime() + ".pdf#1");
    String stray = clients.batchJobs.get().submit(gathering, List.of(BatchJobs.Request.of(gathering,
        key, "%PDF-1.4 stray".getBytes(StandardCharsets.US_ASCII), "application/pdf"))).name().orElseThrow();
    clients.firestore.get().collection("gatherings").document(gathering).set(Map.of("state", "submitted",
        "inFlight", true, "job", "batches/the-adopted-one", "members", List.of(key.documentId()))).get();
    MessagePublisher publisher = mock(MessagePublisher.class);
    ReconcileFlow later =
        resumingReconciler(publisher, () -> Instant.now().plus(StrayJobs.STRAY_AFTER).plusSeconds(60));

    ReconcileSummary run = later.run();

    assertEquals(BatchState.CANCELLED, gemini.state(stray), run.toMap().toString());
    assertTrue(run.cancelled >= 1, run.toMap().toString());
  }

  @Test
  void aWaitingDocumentsJob_isCompletedWhateverItsAge_whileTheListingLeavesJobsThatOldAlone() throws Exception {
    Submitted waiting = submitFinished("old");

    // To this reconciler every ended job is too old to complete from the listing (its records could be gone).
    ReconcileSummary run = reconciler(Duration.ZERO).run();

    assertEquals(1, run.tooOld, "the listing showed one ended job and left it: " + run.toMap());
    assertEquals(1, run.processed, "the waiting document's job was completed all the same: " + run.toMap());
    assertEquals("analysed", clients.firestore.get().collection("analyses").document(waiting.document().documentId())
        .get().get().getString("status"));
  }

  @Test
  void deferredDocuments_areResumedOldestFirst_untilTheBudgetDefersOneAgain() throws Exception {
    Instant start = Instant.parse("2026-11-30T08:00:00Z");
    List<IdempotencyKey> deferred = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/deferred/" + i + "-" + System.nanoTime() + ".pdf#1");
      deferred.add(key);
      // Deferred in the order 2, 0, 3, 1.
      Instant at = start.plusSeconds(new int[] {1, 3, 0, 2}[i]);
      clients.ledger.commit(clients.records.get().deferred(key,
          new DocumentSource("inbox", "deferred/" + i + ".pdf", 1, "application/pdf", 10, null, null), "over budget",
          at));
    }
    DocumentFlow documents = mock(DocumentFlow.class);
    List<IdempotencyKey> resumed = new ArrayList<>();
    when(documents.resume(any())).thenAnswer(call -> {
      RecordQueries.Deferred document = call.getArgument(0);
      resumed.add(document.documentKey());
      Outcome outcome = resumed.size() < 3 ? Outcome.processed(Map.of(), 2)
          : Outcome.deferred("over the budget again", 2);
      return Report.of(document.documentKey(), Effects.ANALYSE, outcome);
    });
    try {
      ReconcileSummary run = reconciler(documents, mock(Budget.class)).run();

      assertEquals(List.of(deferred.get(2), deferred.get(0), deferred.get(3)), resumed,
          "oldest first, stopping at the first deferred again");
      assertEquals(2, run.deferredResumed, run.toMap().toString());
      assertEquals(2, run.toMap().get("deferred_resumed"));

      // The oldest waits for a larger budget: passed over; the next is resumed; the one after is deferred again.
      resumed.clear();
      doAnswer(call -> {
        RecordQueries.Deferred document = call.getArgument(0);
        resumed.add(document.documentKey());
        Report report = Report.of(document.documentKey(), Effects.ANALYSE, switch (resumed.size()) {
          case 2 -> Outcome.processed(Map.of(), 2);
          default -> Outcome.deferred("over the budget", 2);
        });
        return resumed.size() == 1 ? report.with(DocumentFlow.LARGER_THAN_A_DAY, true) : report;
      }).when(documents).resume(any());
      ReconcileSummary passedOver = reconciler(documents, mock(Budget.class)).run();
      assertEquals(List.of(deferred.get(2), deferred.get(0), deferred.get(3)), resumed,
          "past the one larger than a day's budget, stopping at the first the day cannot take");
      assertEquals(1, passedOver.deferredResumed, passedOver.toMap().toString());

      Budget usedUp = mock(Budget.class);
      when(usedUp.exhausted()).thenReturn(true);
      resumed.clear();
      reconciler(documents, usedUp).run();
      assertEquals(List.of(), resumed, "nothing fits today: no document is read, no Gemini call made");
    } finally {
      for (IdempotencyKey key : deferred) {
        clients.firestore.get().collection("analyses").document(key.documentId()).delete().get();
      }
    }
  }

  /**
   * A copy of a document whose first copy is not analysed yet waits for that analysis, not for budget: deferred again,
   * it does not stop the documents deferred after it.
   */
  @Test
  void aCopyWaitingForItsFirstCopysAnalysis_doesNotStopTheDeferredDocumentsAfterIt() throws Exception {
    Instant start = Instant.parse("2026-11-30T07:00:00Z");
    List<IdempotencyKey> deferred = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/waiting/" + i + "-" + System.nanoTime() + ".pdf#1");
      deferred.add(key);
      clients.ledger.commit(clients.records.get().deferred(key,
          new DocumentSource("inbox", "waiting/" + i + ".pdf", 1, "application/pdf", 10, null, null), "waiting",
          start.plusSeconds(i)));
    }
    DocumentFlow documents = mock(DocumentFlow.class);
    List<IdempotencyKey> resumed = new ArrayList<>();
    when(documents.resume(any())).thenAnswer(call -> {
      RecordQueries.Deferred document = call.getArgument(0);
      resumed.add(document.documentKey());
      if (resumed.size() == 1) {
        return Report.of(document.documentKey(), Effects.ANALYSE,
            Outcome.deferred("waiting for the first copy of the same bytes to be analysed", 2))
            .with("waitingForContent", true);
      }
      return Report.of(document.documentKey(), Effects.ANALYSE, Outcome.processed(Map.of(), 2));
    });
    try {
      ReconcileSummary run = reconciler(documents, mock(Budget.class)).run();

      assertEquals(deferred, resumed.subList(0, Math.min(2, resumed.size())), "past the waiting copy");
      assertEquals(1, run.deferredResumed, run.toMap().toString());
    } finally {
      for (IdempotencyKey key : deferred) {
        clients.firestore.get().collection("analyses").document(key.documentId()).delete().get();
      }
    }
  }

  /**
   * Another application's job in the same Gemini project, with its answers in a large responses file: the reconciler
   * refuses it from one query of the pipeline's own documents, before anything is downloaded, so the file can
   * neither exhaust an instance's memory nor hold up the run at the same place on every run.
   */
  @Test
  void aForeignJobWithALargeResponsesFile_isRefused_withoutItsResultsBeingDownloaded() throws Exception {
    StringBuilder jsonl = new StringBuilder();
    for (int i = 0; i < 200; i++) {
      jsonl.append("{\"key\":\"row-").append(i).append("\",\"request\":{\"contents\":[{\"role\":\"user\",")
          .append("\"parts\":[{\"text\":\"").append("x".repeat(2000)).append("\"}]}]}}\n");
    }
    var client = clients.gemini.get();
    var file = client.files.upload(jsonl.toString().getBytes(StandardCharsets.UTF_8),
        UploadFileConfig.builder().mimeType("application/jsonl").build());
    String foreign = client.batches.create("gemini-3.5-flash-lite",
        BatchJobSource.builder().fileName(file.name().orElseThrow()).build(),
        CreateBatchJobConfig.builder().displayName("another team's nightly job").build())
        .name().orElseThrow();
    gemini.finish(foreign, BatchState.SUCCEEDED);
    long downloads = gemini.count("files.download");

    ReconcileSummary run = reconciler(Duration.ofDays(29), 50, 20).run();

    assertTrue(run.rejected >= 1, "the foreign job is refused once: " + run.toMap());
    assertEquals(downloads, gemini.count("files.download"), "its responses file was never downloaded");
    assertEquals(0, reconciler(Duration.ofDays(29), 50, 20).run().rejected, "and never looked at again");
  }

  /**
   * A deferred document resumed by the reconciler is queued and gathered into a job, whose batches.create is carried
   * out and its answer lost: the gathering stays open, its job recorded nowhere. That job is not a stray — neither
   * cancelled while it runs nor refused once it has ended — and a later run resumes the gathering, whose next try
   * adopts the job by its display name: one job, one bill, one publication.
   */
  @ParameterizedTest(name = "the job ended before the gathering was resumed: {0}")
  @ValueSource(booleans = {false, true})
  void aGatheringWhoseSubmissionAnswerWasLost_isResumed_andAdoptsTheJobItMade(boolean endedFirst) throws Exception {
    IdempotencyKey key =
        IdempotencyKey.of("gcs:inbox/reconcile/lost-" + endedFirst + "-" + System.nanoTime() + ".pdf#1");
    clients.ledger.commit(clients.records.get().deferred(key,
        new DocumentSource("inbox", "lost.pdf", 1, "application/pdf", 10, null, null), "over budget",
        Instant.now().minusSeconds(60)));
    MessagePublisher publisher = mock(MessagePublisher.class);
    when(publisher.publish(any(), any(), any())).thenReturn("m-1");
    Duration[] shift = {Duration.ZERO};
    ReconcileFlow reconciler = resumingReconciler(publisher, () -> Instant.now().plus(shift[0]));
    long made = gemini.count("batchGenerateContent.carriedOut");
    List<String> before = gemini.batchNames();

    gemini.ambiguousNext("batchGenerateContent", 1, AmbiguousFailure.RESET);
    assertEquals(1, reconciler.run().deferredResumed,
        "resumed and queued; batches.create carried out, its answer lost");
    String job = gemini.batchNames().stream().filter(name -> !before.contains(name)).findFirst().orElseThrow();
    assertEquals("gathered", analysis(key).getString("status"));
    if (endedFirst) {
      gemini.finish(job, BatchState.SUCCEEDED);
    }
    shift[0] = StrayJobs.STRAY_AFTER.plusMinutes(1); // past the submission's lease, and old enough for a stray
    ReconcileSummary adopting = reconciler.run();
    assertEquals(1, adopting.gatheringsResumed, "the next try adopted the job: " + adopting.toMap());
    assertEquals(0, adopting.cancelled, adopting.toMap().toString());
    assertEquals(0, adopting.rejected, adopting.toMap().toString());
    assertEquals(job, analysis(key).getString("job"));
    gemini.finish(job, BatchState.SUCCEEDED);
    ReconcileSummary completing = reconciler.run();

    assertEquals(BatchState.SUCCEEDED, gemini.state(job), "never cancelled");
    assertEquals(1, gemini.count("batchGenerateContent.carriedOut") - made, "one job for the document, ever");
    assertEquals("analysed", analysis(key).getString("status"), completing.toMap().toString());
    assertTrue(clients.firestore.get().collection("billing").document(key.documentId()).get().get().exists());
    verify(publisher, times(1)).publish(any(), any(), TestSignatures.keyed(key.value()));
    verify(publisher, times(1)).publish(any(), any(), any());
  }

  private static DocumentSnapshot analysis(IdempotencyKey key) throws Exception {
    return clients.firestore.get().collection("analyses").document(key.documentId()).get().get();
  }

  /** The reconciler of a batch-mode deployment, documents read from a mocked inbox, results published to a mock. */
  private static ReconcileFlow resumingReconciler(MessagePublisher publisher, InstantSource clock) throws Exception {
    ResultPublication publication =
        new ResultPublication(clients.once, () -> publisher, () -> "projects/p/topics/r", TestSignatures.RESULTS);
    DocumentReader inbox = mock(DocumentReader.class);
    // Bytes of their own at each read: documents of other tests in this emulator are not copies of these.
    when(inbox.read(any(), any(Long.class))).thenAnswer(read -> ("%PDF-1.4 lost " + UUID.randomUUID())
        .getBytes(StandardCharsets.US_ASCII));
    BatchSubmitter submitter = new BatchSubmitter(clients.once, clients.gatherings, clients.queries, clients.records,
        () -> inbox, clients.batchJobs, publication,
        new BatchSubmitter.Limits(100, 1 << 20, Duration.ZERO, 90, Duration.ofSeconds(10), 1 << 20), clock);
    DocumentFlow documents = new DocumentFlow(clients.once, clients.records, clients.queries, Budget.NONE,
        clients.estimator, () -> inbox, clients.analyzer, () -> submitter, publication, DocumentFlow.Mode.BATCH,
        1 << 20, new DocumentFlow.PaidCalls(Duration.ofSeconds(10), 5));
    CompletionFlow completion = new CompletionFlow(clients.once, clients.batchJobs, clients.records, clients.queries,
        clients.gatherings, publication, 5, InstantSource.system());
    return new ReconcileFlow(clients.batchJobs, clients.queries, clients.gatherings, completion, () -> documents,
        () -> submitter,
        Budget.NONE,
        new ReconcileFlow.Limits(50, 20, Duration.ofMinutes(1), Duration.ofDays(29), 100, 100), clock,
        clients.once.log());
  }

  private record Submitted(IdempotencyKey document, String job) {}

  /** A document submitted as DocumentUploaded submits it, whose job has then succeeded and sent no webhook. */
  private static Submitted submitFinished(String name) throws Exception {
    IdempotencyKey document = IdempotencyKey.of("gcs:inbox/reconcile/" + name + "-" + System.nanoTime() + ".pdf#1");
    String job = clients.batchJobs.get().submit(document, "%PDF-1.4 test".getBytes(StandardCharsets.US_ASCII),
        "application/pdf").name().orElseThrow();
    clients.once.run(document, Effects.ANALYSE, attempt -> Completion.of(Map.of("job", job),
        clients.records.get().submitted(document,
            new DocumentSource("inbox", "x.pdf", 1, "application/pdf", 10, null, null), job,
            Reservation.NONE)));
    gemini.finish(job, BatchState.SUCCEEDED);
    return new Submitted(document, job);
  }

  /** A listing cut to one job, as a busy project's would cut it to a thousand. */
  private static ReconcileFlow reconciler() {
    return reconciler(Duration.ofDays(29));
  }

  private static ReconcileFlow reconciler(Duration maxAge) {
    return reconciler(maxAge, 1, 1);
  }

  private static ReconcileFlow reconciler(Duration maxAge, int pageSize, int maxPages) {
    return reconciler(maxAge, pageSize, maxPages, () -> Wiring.documentFlow(clients), Budget.NONE);
  }

  private static ReconcileFlow reconciler(DocumentFlow documents, Budget budget) {
    return reconciler(Duration.ofDays(29), 1, 1, () -> documents, budget);
  }

  private static ReconcileFlow reconciler(Duration maxAge, int pageSize, int maxPages,
      Supplier<DocumentFlow> documents, Budget budget) {
    BatchSubmitter submitter = Wiring.batchSubmitter(clients,
        Lazy.of(() -> new DocumentReader(clients.storage.get())), InstantSource.system());
    return new ReconcileFlow(clients.batchJobs, clients.queries, clients.gatherings, Wiring.completionFlow(clients),
        documents,
        () -> submitter, budget,
        new ReconcileFlow.Limits(pageSize, maxPages, Duration.ofMinutes(1), maxAge, 100, 100), InstantSource.system(),
        clients.once.log());
  }
}
