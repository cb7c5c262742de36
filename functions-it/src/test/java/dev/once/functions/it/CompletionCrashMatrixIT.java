package dev.once.functions.it;

import static dev.once.functions.it.MatrixStack.JOB_DOCUMENTS;
import static dev.once.functions.it.PipelineStack.attributed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.pubsub.v1.PubsubMessage;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Ledger;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.Faults;
import dev.once.local.http.RetryPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The completion flow (batch mode) of jobs of several documents, with the process completing them killed with SIGKILL
 * at each point: BatchCompleted, to which the webhook hands the jobs (or the reconciler standing in for it). Per
 * point, 5 documents gathered into one job, its completion killed once. The guard's points are those of the job's one chunk of documents (its claim
 * {@code gemini:batches/ID#chunk-0}, whose commit records the documents and whose publishes announce them), but for
 * {@code after-claim:complete}, the job's own claim, before anything is read; besides them: during batches.get, and
 * half-way through the chunk's publications (the third document's publish reached Pub/Sub and is not answered yet).
 * Eventarc redelivers the hand-off; the reconciler (run as Cloud Scheduler would) completes whatever BatchCompleted
 * could not. Per document, exactly: one batch job, one analysis ({@code analysed}), one bill, one notification; every
 * publish carried out is on the topic, the same message under the document's key, at most once more than the kills
 * of its job. batches.get finds each job ended at most once, plus once per kill at or after the call (the reconciler's
 * status polls of jobs still running are not counted), also where the kill leaves the chunk's publishes claimed: the
 * tries until that lease runs out find the chunk held before they read the job; and a try that failed (a call that
 * timed out on a loaded machine) may have read it once more. Each killed completion is taken over only once the dead
 * holder's lease ran out (the ledger's times); each kill's time to recovery is printed and kept, not asserted.
 */
class CompletionCrashMatrixIT {
  private static final Duration PER_JOB = Bounds.PATIENT;
  /** A cell's jobs: each of its documents' completions is killed once. */
  private static final int JOBS = 1;
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(2);
  private static final int LEASE_SECONDS = 3;
  /** How long the publish a kill interrupts half-way goes unanswered: the kill comes well within it. */
  private static final Duration HELD_PUBLISH = Duration.ofSeconds(20);
  /** The job's document whose publish the kill interrupts, in the order they are published. */
  private static final int HALF_WAY = 3;
  /** The points where the test kills the process itself (the rest are the test kit's, {@code armCrash}). */
  private static final List<String> EXTERNAL = List.of("during-gemini", "during-publish");
  private static MatrixStack matrix;
  private static Ledger ledger;
  private static final RecoveryTimes RECOVERY = new RecoveryTimes("CompletionCrashMatrixIT (batch mode, jobs of 5)",
      "ONCE_LEASE_SECONDS 3, Eventarc redelivering within 1 s, the reconciler every 2 s",
      "every document of the job notified and the killed effect's record done");

  @BeforeAll
  static void start() {
    // A patient relay, as Eventarc is (60 tries a second apart ran out while a loaded machine held a claim).
    matrix = MatrixStack.start(MatrixStack.gathering(new PipelineStack.Config("batch", LEASE_SECONDS,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of())));
    matrix.stack.keepAlive();
    ledger = matrix.stack.ledger();
  }

  @AfterAll
  static void stop() {
    RECOVERY.report("recovery-completion-crash-matrix.md");
    matrix.close();
  }

  /** The points killed from outside first: they need no restart of the processes the stack started with. */
  @ParameterizedTest(name = "killed {0}")
  @ValueSource(strings = {"during-gemini", "during-publish", "after-claim:complete", "before-complete:complete",
      "after-complete:complete", "before-complete:publish"})
  void everyDocument_isCompletedOnce_whateverThePointOfTheKill(String point) throws IOException {
    Instant started = Instant.now();
    String cell = "job-crash-" + point.replace(':', '-');
    Path crashLog = matrix.stack.logDir.resolve(cell + ".crashes");
    Files.deleteIfExists(crashLog);
    boolean external = EXTERNAL.contains(point);
    List<String> keys = matrix.uploadFirst(cell, JOBS * JOB_DOCUMENTS);
    Map<String, String> jobOf = matrix.submittedJobs(keys);
    List<String> jobs = jobOf.values().stream().distinct().toList();
    assertEquals(JOBS, jobs.size(), "the cell's documents gathered into " + JOBS + " jobs: " + jobOf);
    String crashJobs = String.join("|", jobs).replace("batches/", "");
    // Both ways to a completion crash at the point: BatchCompleted, and the reconciler that stands in when it gives up.
    String crashKeys = "gemini:batches/(" + crashJobs + ")" + (point.startsWith("after-claim:") ? "" : "#chunk-0");
    for (String function : List.of("BatchCompleted", "GeminiReconciler")) {
      if (external) {
        matrix.stack.disarmCrash(function);
      } else {
        matrix.stack.armCrash(function, point, crashKeys, crashLog);
      }
    }
    long getsBefore = matrix.stack.gemini.count("batches.get.ended");

    int externalKills = 0;
    Map<String, Integer> onTopicAtKill = new HashMap<>();
    for (String job : jobs) {
      List<String> members = keys.stream().filter(key -> job.equals(jobOf.get(key))).toList();
      Instant sent = Instant.now();
      // during-gemini: the job's batches.get is held at the stand-in until its caller is dead, however long the kill
      // takes; the takeover's, after the release, is answered at once.
      Faults.Gate held = point.equals("during-gemini") ? matrix.stack.gemini.hold("batches.get") : null;
      if (point.equals("during-publish")) {
        matrix.pubsub.failFirstPublishOfNth("gcs:inbox/" + MatrixStack.folder(cell) + "/", HALF_WAY,
            AmbiguousFailure.late(HELD_PUBLISH));
      }
      try {
        matrix.stack.gemini.finish(job, BatchState.SUCCEEDED);
        if (held != null) {
          Await.until(PER_JOB, () -> held.arrived() > 0, "batches.get of " + job);
        } else if (point.equals("during-publish")) {
          Await.until(PER_JOB, () -> members.stream().mapToInt(matrix.pubsub::failed).sum() > 0,
              "the publish of the job's document number " + HALF_WAY);
        }
        if (external) {
          matrix.stack.function("BatchCompleted").kill();
          externalKills++;
        }
      } finally {
        if (held != null) {
          held.release();
        }
      }
      Instant killed = awaitKill(job, sent);
      // What the killed process had published: a takeover (a lease later) publishes the job's documents again.
      members.forEach(key -> onTopicAtKill.put(key, matrix.pubsub.carriedOut(key)));
      if (point.equals("during-publish")) {
        // The job's publishes go side by side (ResultPublication.PUBLISHING_AT_ONCE): the others of the held one's
        // wave may be on the topic too, but the chunk's publishes are not recorded as done.
        long published = members.stream().filter(key -> onTopicAtKill.get(key) > 0).count();
        IdempotencyKey chunk = IdempotencyKey.of(GeminiCompletionKeys.ofName(job).value() + "#chunk-0");
        assertTrue(published >= HALF_WAY && ledger.lookup(chunk, "publish")
            .map(record -> record.state() != RecordState.DONE).orElse(true),
            "killed half-way through the job's publications: " + onTopicAtKill);
      }
      awaitReconcilingIfNeeded(() -> members.stream().allMatch(key -> matrix.stack.notifiedWith(key).size() == 1),
          "the notifications of " + job);
      recovered(point, job, killed);
      assertTakenOverAfterTheLease(point, job);
    }
    matrix.settle(keys, true);

    int kills =
        external ? externalKills : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(JOBS, kills, "one kill per job");
    List<MatrixTally.Document> documents = matrix.measure(keys, true);
    MatrixTally tally = new MatrixTally("completion", "killed " + point, kills, documents,
        Duration.between(started, Instant.now()));
    System.out.println(MatrixTally.HEADER + "\n" + tally.row());
    assertEquals(keys.size(), documents.size());
    List<PubsubMessage> published = matrix.stack.published();
    for (MatrixTally.Document document : documents) {
      String key = document.key();
      assertEquals(1, document.jobs(), "one batch job for " + key);
      assertEquals(1, document.analyses(), "one analysis of " + key);
      assertEquals("analysed", document.status(), key);
      assertEquals(1, document.bills(), "one bill for " + key);
      assertEquals(matrix.pubsub.carriedOut(key), document.publications(), "every publish carried out is on the topic");
      int atKill = onTopicAtKill.get(key);
      assertTrue(document.publications() >= Math.max(1, atKill) && document.publications() <= atKill + 1,
          "published " + key + " once, plus at most one copy if it was on the topic when its job's completion was"
              + " killed (" + atKill + "): " + document.publications());
      List<PubsubMessage> copies = attributed(published, key);
      assertTrue(copies.stream().allMatch(copy -> copy.getData().equals(copies.get(0).getData())),
          "every copy the same message: " + key);
      assertEquals(1, document.notifyRequests(), "one request to the endpoint for " + key);
      assertEquals(1, document.notified(), "one notification recorded for " + key);
    }
    long gets = matrix.stack.gemini.count("batches.get.ended") - getsBefore;
    Map<String, List<String>> tries = new LinkedHashMap<>();
    jobs.forEach(job -> tries.put(job, matrix.outcomes(GeminiCompletionKeys.ofName(job).value(), "complete")));
    // A kill that leaves the job's chunk claimed (its publishes) leaves the completion to that claim until its lease
    // runs out: the tries meanwhile find the chunk held before they read the job, so none costs a batches.get. On a
    // loaded machine a try can also lose its lease after its read: each abandoned try beyond the kills may cost one;
    // and a try that failed (a call that timed out) may have read the job before it failed.
    long abandoned = tries.values().stream().flatMap(List::stream).filter("abandoned"::equals).count();
    long failed = tries.values().stream().flatMap(List::stream).filter("failed"::equals).count();
    long bound = JOBS + (point.equals("after-claim:complete") ? 0 : kills) + Math.max(0, abandoned - kills) + failed;
    assertTrue(gets >= JOBS && gets <= bound, "batches.get of ended jobs " + gets + " within [" + JOBS + ", "
        + bound + "]; the tries of the jobs' completions: " + tries);
  }

  /**
   * Recovery from the kill as the ledger records it: among the job's records (its completion, its chunk's completion
   * and publications, the job's publication), the dead holder's try abandoned, and each try that took a record over
   * from a dead holder began only once that holder's lease ({@value #LEASE_SECONDS} s at least) had run out, by
   * Firestore's clock.
   */
  private static void assertTakenOverAfterTheLease(String point, String job) {
    String jobKey = GeminiCompletionKeys.ofName(job).value();
    Map<String, List<Call>> records = new LinkedHashMap<>();
    for (String key : List.of(jobKey, jobKey + "#chunk-0")) {
      for (String effect : List.of("complete", "publish")) {
        ledger.lookup(IdempotencyKey.of(key), effect).ifPresent(r -> records.put(key + " " + effect, r.calls()));
      }
    }
    assertTrue(records.values().stream().flatMap(List::stream).anyMatch(c -> c.outcome() == Call.Outcome.ABANDONED),
        "killed " + point + ": the dead holder's try is recorded abandoned: " + records);
    records.forEach((record, calls) -> {
      for (int i = 0; i + 1 < calls.size(); i++) {
        if (calls.get(i).outcome() == Call.Outcome.ABANDONED) {
          assertTrue(!calls.get(i + 1).at().isBefore(calls.get(i).at().plusSeconds(LEASE_SECONDS)),
              record + " taken over only once its dead holder's lease ran out: " + calls);
        }
      }
    });
  }

  /** Waits for {@code done}, running the reconciler every few seconds, as Cloud Scheduler would. */
  private static void awaitReconcilingIfNeeded(BooleanSupplier done, String what) {
    matrix.stack.awaitReconciling(PER_JOB, RECONCILE_AFTER, done, what);
  }

  /** When the watchdog found the process completing {@code job} dead (BatchCompleted, or the reconciler). */
  private static Instant awaitKill(String job, Instant sent) {
    return Await.value(PER_JOB, () -> Stream.of("BatchCompleted", "GeminiReconciler")
        .flatMap(name -> matrix.stack.lastDeath(name).stream()).filter(death -> death.isAfter(sent))
        .max(Instant::compareTo), "the kill of the completion of " + job + " to be seen");
  }

  /**
   * Records the time from the kill to the killed effect's completion (the job's, or its publication): a figure for
   * BENCHMARKS.md, printed and kept, not a bound the test asserts (it is the machine's load as much as the code).
   */
  private static void recovered(String point, String job, Instant killed) {
    String effect = point.endsWith(":complete") || point.equals("during-gemini") ? "complete" : "publish";
    IdempotencyKey jobKey = GeminiCompletionKeys.ofName(job);
    // A publication killed before its completion was recorded has already reached the topic (the notification came):
    // its record is finished by the next completion attempt, BatchCompleted's or the reconciler's.
    awaitReconcilingIfNeeded(() -> ledger.lookup(jobKey, effect).map(r -> r.state() == RecordState.DONE)
        .orElse(false), effect + " of " + job + " done");
    Duration recovery = Duration.between(killed, Instant.now()); // the job's documents notified already: finished
    RECOVERY.record(point, recovery);
    System.out.printf("killed %-26s %s recovered %5.1f s after the kill%n", point, job, recovery.toMillis() / 1000.0);
  }
}
