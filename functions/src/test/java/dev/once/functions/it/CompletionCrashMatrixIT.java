package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.storage.Blob;
import dev.once.local.Await;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The completion flow (batch mode), with BatchCompleted's process (the webhook hands it the jobs) killed with
 * SIGKILL at each point: 10 jobs per point, one at a time, every 5th killed. Eventarc redelivers the hand-off; the
 * reconciler (run as Cloud Scheduler would) completes whatever BatchCompleted could not. Every document ends analysed and billed
 * exactly once, published at least once with its key, notified once; batches.get finds each job ended at most once,
 * plus once per kill at or after the call (the reconciler's status polls of jobs still running are not counted).
 * Each kill's time to recovery (the kill to the notification) is printed and bounded.
 */
class CompletionCrashMatrixIT {
  private static final int JOBS = 10;
  private static final int KILL_EVERY = 5;
  private static final Duration PER_JOB = Duration.ofSeconds(90);
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(4);
  /** The test's lease (3 s), Eventarc's redeliveries and a reconciler run: a slower recovery waited for something else. */
  private static final Duration RECOVERY_BOUND = Duration.ofSeconds(45);
  private static PipelineStack stack;
  private static dev.once.ledger.Ledger ledger;

  @BeforeAll
  static void start() {
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(60).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)), Map.of()));
    stack.keepAlive();
    ledger = new dev.once.firestore.FirestoreLedger(stack.db, dev.once.internal.ledger.LedgerConfig.defaults());
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static String submittedJob(String key) {
    return Await.value(PER_JOB, () -> withKey(stack.documents("analyses"), key).stream()
        .map(a -> a.getString("job")).filter(java.util.Objects::nonNull).findFirst(), "the batch job of " + key);
  }

  /** Waits for the notification; a hand-off that was given up is made good by the reconciler, run every few seconds. */
  private static void awaitNotifiedReconcilingIfNeeded(String key) {
    awaitReconcilingIfNeeded(() -> stack.notifiedWith(key).size() == 1, "the notification of " + key);
  }

  /** Waits for {@code done}, running the reconciler every few seconds, as Cloud Scheduler would. */
  private static void awaitReconcilingIfNeeded(java.util.function.BooleanSupplier done, String what) {
    Instant[] lastReconcile = {Instant.now()};
    Await.until(PER_JOB, () -> {
      if (done.getAsBoolean()) {
        return true;
      }
      if (Instant.now().isAfter(lastReconcile[0].plus(RECONCILE_AFTER))) {
        lastReconcile[0] = Instant.now();
        stack.reconcileIfUp(); // the reconciler may be the process a crash point just killed
      }
      return false;
    }, what);
  }

  /**
   * Prints the time from the kill (of BatchCompleted or the reconciler) to the killed effect's completion (the job's
   * completion, or its publication), and bounds it.
   */
  private static void assertRecovered(String point, String key, String job, Instant sent) {
    Instant killed = Await.value(PER_JOB, () -> java.util.stream.Stream.of("BatchCompleted", "GeminiReconciler")
        .flatMap(name -> stack.lastDeath(name).stream()).filter(death -> death.isAfter(sent)).max(Instant::compareTo),
        "the kill of " + key + " to be seen");
    String effect = point.endsWith(":publish") ? "publish" : "complete";
    dev.once.key.IdempotencyKey jobKey = dev.once.gemini.GeminiCompletionKeys.ofName(job);
    // A publication killed before its completion was recorded has already reached the topic (the notification came):
    // its record is finished by the next completion attempt, BatchCompleted's or the reconciler's.
    awaitReconcilingIfNeeded(() -> ledger.lookup(jobKey, effect).map(r -> r.state() == dev.once.internal.ledger.RecordState.DONE)
        .orElse(false), effect + " of " + job + " done");
    Duration recovery = Duration.between(killed, Instant.now());
    System.out.printf("killed %-26s %s recovered %5.1f s after the kill%n", point, key, recovery.toMillis() / 1000.0);
    assertTrue(recovery.compareTo(RECOVERY_BOUND) <= 0, key + " recovered in " + recovery + ", over " + RECOVERY_BOUND);
  }

  @ParameterizedTest(name = "killed {0}")
  @ValueSource(strings = {"after-claim:complete", "during-gemini", "before-complete:complete",
      "after-complete:complete", "before-complete:publish"})
  void everyDocument_isCompletedOnce_whateverThePointOfTheKill(String point) throws IOException {
    String folder = "job-crash-" + point.replace(':', '-');
    Path crashLog = stack.logDir.resolve(folder + ".crashes");
    Files.deleteIfExists(crashLog);
    boolean external = point.equals("during-gemini");
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < JOBS; i++) {
      Blob blob = stack.upload(String.format("%s/doc-%02d.pdf", folder, i), InvoicePdf.of(folder + i),
          "application/pdf");
      keys.add(key(blob));
    }
    List<String> jobs = keys.stream().map(CompletionCrashMatrixIT::submittedJob).toList();
    String crashJobs = String.join("|", List.of(jobs.get(0), jobs.get(5))).replace("batches/", "");
    // Both ways to a completion crash at the point: BatchCompleted, and the reconciler that stands in when it gives up.
    List<String> crashFlags = external ? List.of() : List.of(
        "-Donce.crash.at=" + point,
        "-Donce.crash.keys=gemini:batches/(" + crashJobs + ")",
        "-Donce.crash.log=" + crashLog.toAbsolutePath());
    stack.restart("BatchCompleted", crashFlags);
    stack.restart("GeminiReconciler", crashFlags);
    long getsBefore = stack.gemini.count("batches.get.ended");

    int externalKills = 0;
    for (int i = 0; i < JOBS; i++) {
      boolean kill = i % KILL_EVERY == 0;
      long callsBefore = stack.gemini.count("batches.get");
      Instant sent = Instant.now();
      if (external && kill) {
        stack.gemini.latency(Duration.ofSeconds(3));
      }
      stack.gemini.finish(jobs.get(i), BatchState.SUCCEEDED);
      if (external && kill) {
        Await.until(PER_JOB, () -> stack.gemini.count("batches.get") > callsBefore, "batches.get of " + jobs.get(i));
        stack.function("BatchCompleted").kill();
        externalKills++;
        stack.gemini.latency(Duration.ZERO);
      }
      awaitNotifiedReconcilingIfNeeded(keys.get(i));
      if (kill) {
        assertRecovered(point, keys.get(i), jobs.get(i), sent);
      }
    }

    int kills = external ? externalKills : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(2, kills, "one kill per 5 jobs");
    stack.assertAnalysedBilledAndPublishedOnce(keys);
    for (String key : keys) {
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
    long gets = stack.gemini.count("batches.get.ended") - getsBefore;
    long bound = JOBS + (point.equals("after-claim:complete") ? 0 : kills);
    assertTrue(gets >= JOBS && gets <= bound, "batches.get of ended jobs " + gets + " within [" + JOBS + ", " + bound
        + "]");
  }
}
