package dev.once.functions;

import static dev.once.pipeline.DocumentStatus.QUEUED;
import static dev.once.pipeline.DocumentStatus.SUBMITTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyList;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.genai.types.BatchJob;
import dev.once.config.Settings;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.PriceTable;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.FirestoreGatherings;
import dev.once.pipeline.FirestoreRecordQueries;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Batch mode's gatherings on the Firestore emulator (Gemini, Storage and Pub/Sub mocked): a gathering's opener that
 * stalls past a submission's lease (a GC pause, a throttled CPU) and assigns a document after the reconciler resumed
 * its submission and sealed its members. That document is in no job; the reconciler's next run queues it again and
 * it goes into a job of its own: every document in exactly one job.
 */
class BatchLostDocumentTest {
  private static final byte[] PDF = "%PDF-1.4 invoice".getBytes(StandardCharsets.US_ASCII);
  private static Firestore db;

  private volatile Instant now = Instant.now();
  private final BatchJobs batchJobs = mock(BatchJobs.class);
  private final List<List<String>> jobs = new CopyOnWriteArrayList<>();
  private final Gatherings gatherings = new FirestoreGatherings(db);
  private final BatchSubmitter submitter;

  @BeforeAll
  static void start() {
    db = FirestoreClients.forEmulator("once-lost-document-test", FirestoreEmulator.shared().hostPort());
  }

  @AfterAll
  static void stop() throws Exception {
    db.close();
  }

  BatchLostDocumentTest() throws Exception {
    Once once = new Once(new FirestoreLedger(db, LedgerOptions.defaults()));
    DocumentReader reader = mock(DocumentReader.class);
    when(reader.read(any(), any(Long.class))).thenReturn(PDF);
    MessagePublisher publisher = mock(MessagePublisher.class);
    when(publisher.publish(anyString(), any(), anyMap())).thenReturn("m-1");
    when(batchJobs.submit(anyString(), anyList(), any(), any())).thenAnswer(call -> {
      List<BatchJobs.Request> requests = call.getArgument(1);
      jobs.add(requests.stream().map(request -> request.documentKey().value()).toList());
      return BatchJob.builder().name("batches/job-" + jobs.size()).build();
    });
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    submitter = new BatchSubmitter(once, () -> gatherings, () -> new FirestoreRecordQueries(db), () -> records,
        () -> reader, () -> batchJobs,
        new ResultPublication(once, () -> publisher, () -> "projects/p/topics/r", TestSignatures.RESULTS),
        new BatchSubmitter.Limits(3, 1 << 20, Duration.ofMinutes(5), 90, Duration.ofSeconds(60), 1 << 20), () -> now);
  }

  /** A document queued in batch mode, as DocumentUploaded queues it; returns its key. */
  private static IdempotencyKey queued(String name) throws Exception {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/" + name + "#1");
    DocumentSource source = new DocumentSource("inbox", name, 1, "application/pdf", PDF.length, null, null);
    db.collection(RecordWrites.ANALYSES).document(key.documentId())
        .set(Map.of("key", key.value(), "status", QUEUED.value(),
            "mode", "batch", "source", source.toMap(), "size", (long) PDF.length,
            "queuedAt", FieldValue.serverTimestamp(), "updatedAt", FieldValue.serverTimestamp()))
        .get();
    return key;
  }

  /** The documents as an opener reads them from the queue: at their update time now. */
  private static List<RecordQueries.Queued> asRead(IdempotencyKey... keys) throws Exception {
    List<RecordQueries.Queued> read = new ArrayList<>();
    for (IdempotencyKey key : keys) {
      DocumentSnapshot analysis = analysis(key);
      read.add(new RecordQueries.Queued(key.documentId(), analysis.getLong("size"),
          analysis.getTimestamp("queuedAt").toDate().toInstant(), 0, 0, analysis.getUpdateTime()));
    }
    return read;
  }

  private static DocumentSnapshot analysis(IdempotencyKey key) throws Exception {
    return db.collection(RecordWrites.ANALYSES).document(key.documentId()).get().get();
  }

  @Test
  void aDocumentAssignedByAStalledOpener_afterItsGatheringWasSealed_isQueuedAgain_andGoesInOneJob() throws Exception {
    String folder = UUID.randomUUID().toString();
    List<IdempotencyKey> keys = new ArrayList<>();
    for (String name : List.of("a", "b", "c")) {
      keys.add(queued(folder + "/" + name + ".pdf"));
    }
    String stalled = UUID.randomUUID().toString().replace("-", "");
    assertEquals(Gatherings.Opening.OPENED, gatherings.open(stalled, 90, Instant.MIN));
    assertEquals(2, gatherings.assign(stalled, asRead(keys.get(0), keys.get(1))));

    // The opener stalls past a submission's lease: the reconciler resumes its gathering's submission.
    now = now.plus(Duration.ofMinutes(10));
    assertEquals(1, submitter.resumeUnsubmitted());
    // The opener wakes, and its assignment of a third queued document lands.
    assertEquals(1, gatherings.assign(stalled, asRead(keys.get(2))));

    // The reconciler's next run.
    submitter.resumeUnsubmitted();
    submitter.submitDue();

    assertEquals(List.of(Set.of(keys.get(0).value(), keys.get(1).value()), Set.of(keys.get(2).value())),
        jobs.stream().map(Set::copyOf).toList(),
        "two jobs: the sealed members, then the document gathered after the seal");
    Set<String> named = new HashSet<>();
    for (IdempotencyKey key : keys) {
      DocumentSnapshot analysis = analysis(key);
      assertEquals(SUBMITTED.value(), analysis.getString("status"), key.value());
      named.add(analysis.getString("job"));
    }
    assertEquals(Set.of("batches/job-1", "batches/job-2"), named);
    assertNotEquals(stalled, analysis(keys.get(2)).getString("batch"), "in a gathering of its own");
  }

  /**
   * Issue 40: a gathering is named after the queue's oldest document, so submitters racing for one job open the same
   * one: the first opens it, the others find it taken while its opener may still be at work, and open another name
   * once it was closed or its opener stopped (open since before a submission's lease).
   */
  @Test
  void aGatheringsName_isOpenedOnce_takenWhileItsOpenerWorks_andGivenWayWhenClosedOrStale() {
    String name = UUID.randomUUID().toString().replace("-", "");
    assertEquals(Gatherings.Opening.OPENED, gatherings.open(name, 90, Instant.MIN));
    assertEquals(Gatherings.Opening.TAKEN, gatherings.open(name, 90, Instant.MIN), "another opener, lately");
    assertEquals(Gatherings.Opening.ENDED, gatherings.open(name, 90, Instant.now().plus(Duration.ofMinutes(1))),
        "an opener that stopped");
    gatherings.close(name);
    assertEquals(Gatherings.Opening.ENDED, gatherings.open(name, 90, Instant.MIN), "closed");
  }

  /** A gathering closed empty (another submitter took its documents), then assigned one late: queued again too. */
  @Test
  void aDocumentAssignedToAClosedGathering_isQueuedAgain() throws Exception {
    IdempotencyKey key = queued(UUID.randomUUID() + "/late.pdf");
    String closed = UUID.randomUUID().toString().replace("-", "");
    assertEquals(Gatherings.Opening.OPENED, gatherings.open(closed, 90, Instant.MIN));
    gatherings.close(closed);
    assertEquals(1, gatherings.assign(closed, asRead(key)));

    submitter.resumeUnsubmitted();

    assertEquals(QUEUED.value(), analysis(key).getString("status"));
    assertEquals(null, analysis(key).getString("batch"));
  }

  /**
   * Review defect 4: an opener stalled past a submission's lease (here, the reconciler resumed its gathering, sealed it
   * and made its job meanwhile) wakes and closes its gathering, which it found empty. The close lands only on a
   * gathering still open and unsealed: the running job stays in flight, so the cap on jobs in flight holds.
   */
  @Test
  void aStalledOpenersClose_afterItsGatheringWasSubmitted_leavesTheRunningJobInFlight() throws Exception {
    IdempotencyKey key = queued(UUID.randomUUID() + "/submitted.pdf");
    String stalled = UUID.randomUUID().toString().replace("-", "");
    assertEquals(Gatherings.Opening.OPENED, gatherings.open(stalled, 90, Instant.MIN));
    assertEquals(1, gatherings.assign(stalled, asRead(key)));
    now = now.plus(Duration.ofMinutes(10));
    assertEquals(1, submitter.resumeUnsubmitted(), "the reconciler submitted the gathering");

    gatherings.close(stalled); // the opener wakes

    DocumentSnapshot gathering = db.collection(Gatherings.COLLECTION).document(stalled).get().get();
    assertEquals(List.of(Gatherings.SUBMITTED, true), List.of(gathering.getString("state"),
        gathering.getBoolean("inFlight")), "still a job in flight");
  }
}
