package dev.once.functions.it;

import static dev.once.functions.it.MatrixStack.JOB_DOCUMENTS;
import static dev.once.pipeline.DocumentStatus.GATHERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.RetryPolicy;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.RecordWrites;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gathering of documents into batch jobs and the job's submission, with the submitter's process (DocumentUploaded)
 * killed with SIGKILL at each point: half-way through adding the documents to the job
 * (the first one's write applied, its answer not back yet), after the submission's claim (before batches.create),
 * after batches.create and before the commit recording the job on its gathering (sealed with its members before
 * batches.create), and after that commit, before the members are told their job. Per point, one job's worth of
 * documents: four queued, then the fifth, whose upload makes the job due and submits it, killed once. The reconciler
 * (run as Cloud Scheduler would) resumes what the kill left. Per document, exactly: one paid batch job ever, one
 * analysis ({@code analysed}), one bill, one publication, one notification; Gemini made as many jobs as the documents
 * name. A submission killed while it held its claim is taken over only once its lease ran out (the ledger's times);
 * each kill's time to recovery is printed and kept, not asserted.
 */
class BatchSubmissionCrashMatrixIT {
  private static final Duration PER_POINT = Bounds.PATIENT;
  /** The submission's lease is twice this plus 5 s: how soon the reconciler resumes a killed one. */
  private static final int GEMINI_TIMEOUT_SECONDS = 2;
  private static final int SUBMISSION_LEASE_SECONDS = 2 * GEMINI_TIMEOUT_SECONDS + 5;
  /**
   * The reconciler's: short, so documents a kill half-way left queued go in a job of their own soon after.
   * DocumentUploaded waits an hour, so the job of a cell is made when its fifth document fills it, by construction:
   * with 6 s there too, four uploads queued more than 6 s apart on a loaded machine made a job of three or four.
   */
  private static final int MAX_WAIT_SECONDS = 6;
  private static final Duration HELD_COMMIT = Duration.ofSeconds(20);
  private static final String EXTERNAL = "during-assign";
  private static FirestoreFaults firestore;
  private static MatrixStack matrix;
  private static final RecoveryTimes RECOVERY =
      new RecoveryTimes("BatchSubmissionCrashMatrixIT (batch mode, a job of 5)",
          "ONCE_LEASE_SECONDS 3, GEMINI_TIMEOUT_SECONDS 2 (a submission's lease: twice that + 5 s), the reconciler's"
              + " BATCH_MAX_WAIT_SECONDS 6, run every 2 s",
          "every document of the job in a submitted batch job");

  @BeforeAll
  static void start() {
    // Every function reaches Firestore through a proxy, which holds the answer of the write a kill interrupts.
    firestore = new FirestoreFaults(FirestoreEmulator.shared().hostPort());
    matrix = MatrixStack.start(MatrixStack.gathering(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("GEMINI_TIMEOUT_SECONDS", String.valueOf(GEMINI_TIMEOUT_SECONDS))))
        .withEnv("BATCH_MAX_WAIT_SECONDS", String.valueOf(MAX_WAIT_SECONDS))
        .withEnv("DocumentUploaded", "BATCH_MAX_WAIT_SECONDS", "3600")
        .withEnv("FIRESTORE_EMULATOR_HOST", firestore.hostPort()));
    matrix.stack.keepAlive();
  }

  @AfterAll
  static void stop() {
    RECOVERY.report("recovery-submission-crash-matrix.md");
    matrix.close();
    firestore.close();
  }

  @ParameterizedTest(name = "killed {0}")
  @ValueSource(strings = {EXTERNAL, "after-claim:submit", "before-complete:submit", "after-complete:submit"})
  void everyDocument_isInOnePaidJob_andCompletedOnce_whateverThePointOfTheKill(String point) throws IOException {
    Instant started = Instant.now();
    String cell = "submit-crash-" + point.replace(':', '-');
    Path crashLog = matrix.stack.logDir.resolve(cell + ".crashes");
    Files.deleteIfExists(crashLog);
    boolean external = point.equals(EXTERNAL);
    // The gathering's submission crashes once at the point (its key names the gathering, new each time).
    // DocumentUploaded only: the submission is the fifth upload's, and the reconciler only resumes it (past its
    // crash) or submits what is left.
    if (external) {
      matrix.stack.disarmCrash("DocumentUploaded");
    } else {
      matrix.stack.armCrash("DocumentUploaded", point, "batch:[0-9a-f]{32}", crashLog);
    }
    long jobsBefore = matrix.stack.gemini.count("batchGenerateContent.carriedOut");

    List<String> keys = new ArrayList<>(IntStream.range(0, JOB_DOCUMENTS - 1).mapToObj(i -> matrix.upload(cell, i))
        .toList());
    Await.until(PER_POINT, () -> matrix.stack.relayIdle() && matrix.withKeys(RecordWrites.ANALYSES, keys).stream()
        .filter(a -> DocumentStatus.QUEUED.is(a.getString("status"))).count() == keys.size(), "four queued");
    int heldBefore = firestore.failed(AmbiguousFailure.late(HELD_COMMIT));
    if (external) {
      // Only an assignment writes this status: the first document's (it goes alone) is applied, and not answered.
      firestore.failOnceCommitHolding(AmbiguousFailure.late(HELD_COMMIT), GATHERED.value());
    }
    Instant sent = Instant.now();
    keys.add(matrix.upload(cell, JOB_DOCUMENTS - 1)); // the job is full: its upload submits it
    if (external) {
      Await.until(PER_POINT, () -> firestore.failed(AmbiguousFailure.late(HELD_COMMIT)) > heldBefore,
          "the first document added to the job");
      matrix.stack.function("DocumentUploaded").kill();
    }
    Instant killed = Await.value(PER_POINT, () -> matrix.stack.lastDeath("DocumentUploaded")
        .filter(death -> death.isAfter(sent)), "the kill of the submission");
    matrix.submittedJobs(keys); // the reconciler resumes it, and submits what the kill left queued
    // A figure for BENCHMARKS.md, not a bound: it is the machine's load as much as the code.
    Duration recovery = Duration.between(killed, Instant.now());
    RECOVERY.record(point, recovery);
    System.out.printf("killed %-26s every document in a job %5.1f s after the kill%n", point,
        recovery.toMillis() / 1000.0);
    Map<String, String> jobOf = matrix.submittedJobs(keys);
    if (point.equals("after-claim:submit") || point.equals("before-complete:submit")) {
      assertTakenOverAfterTheLease(point, matrix.submissionsOf(keys));
    }
    matrix.finish(jobOf.values());
    matrix.settle(keys, true);

    int kills = external ? 1 : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(1, kills, "one kill");
    List<MatrixTally.Document> documents = matrix.measure(keys, true);
    MatrixTally tally = new MatrixTally("submission", "killed " + point, kills, documents,
        Duration.between(started, Instant.now()));
    System.out.println(MatrixTally.HEADER + "\n" + tally.row() + "\njobs: " + jobOf);
    assertEquals(JOB_DOCUMENTS, documents.size());
    for (MatrixTally.Document document : documents) {
      String key = document.key();
      assertEquals(1, document.jobs(), "one paid batch job ever for " + key);
      assertEquals(1, document.analyses(), "one analysis of " + key);
      assertEquals("analysed", document.status(), key);
      assertEquals(1, document.bills(), "one bill for " + key);
      assertEquals(1, document.publications(), "published " + key + " once");
      assertEquals(1, document.notifyRequests(), "one request to the endpoint for " + key);
      assertEquals(1, document.notified(), "one notification recorded for " + key);
    }
    long jobs = jobOf.values().stream().distinct().count();
    assertEquals(jobs, matrix.stack.gemini.count("batchGenerateContent.carriedOut") - jobsBefore,
        "Gemini made the jobs the documents name, and no other");
    if (!external) {
      assertEquals(1, jobs, "a kill of the submission loses none of the job's documents: " + jobOf);
    }
  }

  /**
   * A submission killed while it held its claim: its try abandoned, and the try that took it over began only once the
   * dead holder's lease (a submission's: {@value #SUBMISSION_LEASE_SECONDS} s at least) had run out, by Firestore's
   * clock.
   */
  private static void assertTakenOverAfterTheLease(String point, List<String> submissions) {
    for (String submission : submissions) {
      List<Call> calls = matrix.stack.ledger().lookup(IdempotencyKey.of(submission), "submit").orElseThrow().calls();
      String tries = "killed " + point + ", " + submission + ": " + calls;
      int dead = calls.stream().map(Call::outcome).toList().indexOf(Call.Outcome.ABANDONED);
      assertTrue(dead >= 0 && dead + 1 < calls.size(), "the dead holder's try abandoned, then taken over: " + tries);
      assertTrue(!calls.get(dead + 1).at().isBefore(calls.get(dead).at().plusSeconds(SUBMISSION_LEASE_SECONDS)),
          "taken over only once the dead holder's lease ran out: " + tries);
      assertEquals(Call.Outcome.DONE, calls.get(calls.size() - 1).outcome(), tries);
    }
  }
}
