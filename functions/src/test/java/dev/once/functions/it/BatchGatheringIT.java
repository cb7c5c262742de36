package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.local.Await;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Batch mode gathers documents into jobs of many, under the real invoker: jobs of three (BATCH_MAX_DOCUMENTS),
 * nothing submitted for a job that is neither full nor old (BATCH_MAX_WAIT_SECONDS: an hour). Whatever fails while a
 * job is made — the submitting process killed (SIGKILL) between batches.create and its commit, batches.create answered
 * late, reset or 5xx — no document is lost and Gemini runs one paid job: the reconciler resumes the submission, which
 * adopts the job by its display name. Each document: one job, one bill, one publication, one notification.
 */
class BatchGatheringIT {
  private static final int PER_JOB = 3;
  private static final Duration DEADLINE = Duration.ofSeconds(90);
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(3);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // A short lease (3 s), so an interrupted submission is resumed within seconds; the relay retries quickly.
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(60).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB), "BATCH_MAX_WAIT_SECONDS", "3600",
            "GEMINI_TIMEOUT_SECONDS", "3")));
    stack.keepAlive();
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static List<String> upload(String folder, int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(key(stack.upload(String.format("%s/doc-%02d.pdf", folder, i), InvoicePdf.of(folder + i),
          "application/pdf")));
    }
    return keys;
  }

  private static QueryDocumentSnapshot analysis(String key) {
    List<QueryDocumentSnapshot> found = withKey(stack.documents("analyses"), key);
    return found.isEmpty() ? null : found.get(0);
  }

  private static String status(String key) {
    QueryDocumentSnapshot analysis = analysis(key);
    return analysis == null ? null : analysis.getString("status");
  }

  /** Waits for {@code done}, running the reconciler every few seconds, as Cloud Scheduler would. */
  private static void awaitReconciling(java.util.function.BooleanSupplier done, String what) {
    stack.awaitReconciling(DEADLINE, RECONCILE_AFTER, done, what);
  }

  /** The jobs the documents' analyses name, once every one names one. */
  private static Set<String> jobsOf(List<String> keys) {
    awaitReconciling(() -> keys.stream().allMatch(key -> analysis(key) != null && analysis(key).getString("job") != null),
        "a job named on every document of " + keys);
    return keys.stream().map(key -> analysis(key).getString("job")).collect(Collectors.toSet());
  }

  /** Finishes the job and waits until every document is notified; then counts exactly, per document. */
  private static void assertCompletedOnce(String job, List<String> keys) {
    stack.gemini.finish(job, BatchState.SUCCEEDED);
    awaitReconciling(() -> keys.stream().allMatch(key -> stack.notifiedWith(key).size() >= 1),
        "every document of " + job + " notified");
    Await.until(DEADLINE, stack::relayIdle, "the relay idle");
    stack.assertAnalysedBilledAndPublishedOnce(keys);
    for (String key : keys) {
      assertEquals(job, analysis(key).getString("job"), key);
      assertEquals(1, attributed(stack.published(), key).size(), "published " + key + " once");
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
  }

  @Test
  void documentsWait_untilAJobIsFull_thenShareOneJob() {
    long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
    List<String> first = upload("gather-full", PER_JOB - 1);
    Await.until(DEADLINE, () -> first.stream().allMatch(key -> "queued".equals(status(key))), "both queued");
    assertEquals(0, stack.reconcile().path("jobs_submitted").asInt(), "neither full nor old: no job yet");
    assertEquals(carriedOut, stack.gemini.count("batchGenerateContent.carriedOut"));

    List<String> keys = new ArrayList<>(first);
    keys.addAll(upload("gather-full-last", 1));
    Set<String> jobs = jobsOf(keys);

    assertEquals(1, jobs.size(), "one job for the three documents: " + jobs);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one batches.create");
    assertCompletedOnce(jobs.iterator().next(), keys);
  }

  /**
   * batches.create is carried out and its answer lost (late, reset, 5xx): the upload that made the job full
   * acknowledges its event with the document queued; the reconciler resumes the gathering and adopts the job.
   */
  @ParameterizedTest(name = "batches.create answered {0}")
  @ValueSource(strings = {"reset", "late", "500"})
  void anAmbiguousBatchesCreate_onAJobOfSeveral_makesOnePaidJob(String failure) {
    long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
    AmbiguousFailure fault = switch (failure) {
      case "reset" -> AmbiguousFailure.RESET;
      case "late" -> AmbiguousFailure.late(Duration.ofSeconds(5)); // past GEMINI_TIMEOUT_SECONDS
      default -> AmbiguousFailure.serverError(500);
    };
    stack.gemini.ambiguousNext("batchGenerateContent", 1, fault);
    List<String> keys = upload("gather-ambiguous-" + failure, PER_JOB);
    Set<String> jobs = jobsOf(keys);

    assertEquals(1, jobs.size(), "one job for the three documents: " + jobs);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one paid job, adopted");
    assertCompletedOnce(jobs.iterator().next(), keys);
  }

  /** DocumentUploaded killed (SIGKILL) after batches.create, before the submission's commit. */
  @Test
  void aSubmitterKilledAfterBatchesCreate_losesNoDocument_andMakesOnePaidJob() throws IOException {
    Path crashLog = stack.logDir.resolve("gather-crash.crashes");
    Files.deleteIfExists(crashLog);
    stack.restart("DocumentUploaded", List.of("-Donce.crash.at=before-complete:submit",
        "-Donce.crash.keys=batch:.*", "-Donce.crash.log=" + crashLog.toAbsolutePath()));
    try {
      long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
      List<String> keys = upload("gather-crash", PER_JOB);
      Await.until(DEADLINE, () -> kills(crashLog) == 1, "the kill");
      Set<String> jobs = jobsOf(keys);

      assertEquals(1, kills(crashLog), "killed once");
      assertEquals(1, jobs.size(), "one job for the three documents: " + jobs);
      assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one paid job, adopted");
      assertCompletedOnce(jobs.iterator().next(), keys);
    } finally {
      stack.restart("DocumentUploaded", List.of());
    }
  }

  private static long kills(Path crashLog) {
    try {
      return Files.exists(crashLog) ? Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count() : 0;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void jobsInFlight_areCountedFromFirestore_andFreedByTheirCompletion() {
    List<String> keys = upload("gather-flight", PER_JOB);
    String job = jobsOf(keys).iterator().next();
    String gathering = analysis(keys.get(0)).getString("batch");
    assertTrue(gatheringInFlight(gathering), "in flight while its job runs");
    assertCompletedOnce(job, keys);
    assertTrue(!gatheringInFlight(gathering), "freed by its completion");
  }

  private static boolean gatheringInFlight(String gathering) {
    return stack.documents("gatherings").stream().filter(g -> g.getId().equals(gathering))
        .map(g -> Boolean.TRUE.equals(g.getBoolean("inFlight"))).findFirst().orElseThrow();
  }
}
