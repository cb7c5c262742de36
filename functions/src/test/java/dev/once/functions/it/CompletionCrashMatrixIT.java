package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.storage.Blob;
import dev.once.local.Await;
import dev.once.local.http.RetryPolicy;
import dev.once.local.gemini.BatchState;
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
 * The completion flow (batch mode), with the webhook's process killed with SIGKILL at each point: 20 jobs per
 * point, one at a time, every 10th killed. The Gemini stand-in retries its webhook a few times; the reconciler
 * (run as Cloud Scheduler would) completes whatever the webhook could not. Every document ends analysed and billed
 * exactly once, published at least once with its key, notified once; batches.get finds each job ended at most once,
 * plus once per kill at or after the call (the reconciler's status polls of jobs still running are not counted).
 */
class CompletionCrashMatrixIT {
  private static final int JOBS = 20;
  private static final int KILL_EVERY = 10;
  private static final Duration PER_JOB = Duration.ofSeconds(90);
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(4);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(60).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)), Map.of()));
    stack.keepAlive();
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static String submittedJob(String key) {
    return Await.value(PER_JOB, () -> withKey(stack.documents("analyses"), key).stream()
        .map(a -> a.getString("job")).filter(java.util.Objects::nonNull).findFirst(), "the batch job of " + key);
  }

  /** Waits for the notification; a webhook that gave up is made good by the reconciler, run every few seconds. */
  private static void awaitNotifiedReconcilingIfNeeded(String key) {
    Instant[] lastReconcile = {Instant.now()};
    Await.until(PER_JOB, () -> {
      if (stack.notifiedWith(key).size() == 1) {
        return true;
      }
      if (Instant.now().isAfter(lastReconcile[0].plus(RECONCILE_AFTER))) {
        lastReconcile[0] = Instant.now();
        stack.reconcileIfUp(); // the reconciler may be the process a crash point just killed
      }
      return false;
    }, "the notification of " + key);
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
    String crashJobs = String.join("|", List.of(jobs.get(0), jobs.get(10))).replace("batches/", "");
    // Both ways to a completion crash at the point: the webhook, and the reconciler that stands in when it gives up.
    List<String> crashFlags = external ? List.of() : List.of(
        "-Donce.crash.at=" + point,
        "-Donce.crash.keys=gemini:batches/(" + crashJobs + ")",
        "-Donce.crash.log=" + crashLog.toAbsolutePath());
    stack.restart("GeminiWebhook", crashFlags);
    stack.restart("GeminiReconciler", crashFlags);
    long getsBefore = stack.gemini.count("batches.get.ended");

    int externalKills = 0;
    for (int i = 0; i < JOBS; i++) {
      boolean kill = i % KILL_EVERY == 0;
      long callsBefore = stack.gemini.count("batches.get");
      if (external && kill) {
        stack.gemini.latency(Duration.ofSeconds(3));
      }
      stack.gemini.finish(jobs.get(i), BatchState.SUCCEEDED);
      if (external && kill) {
        Await.until(PER_JOB, () -> stack.gemini.count("batches.get") > callsBefore, "batches.get of " + jobs.get(i));
        stack.function("GeminiWebhook").kill();
        externalKills++;
        stack.gemini.latency(Duration.ZERO);
      }
      awaitNotifiedReconcilingIfNeeded(keys.get(i));
    }

    int kills = external ? externalKills : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(2, kills, "one kill per 10 jobs");
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
