package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.Await;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.RetryPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
  private static final Duration DEADLINE = GatheredJobs.DEADLINE;
  private static PipelineStack stack;
  private static GatheredJobs jobs;

  @BeforeAll
  static void start() {
    // A short lease (3 s), so an interrupted submission is resumed within seconds; the relay retries quickly, and as
    // patiently as Eventarc (60 tries a second apart ran out while a loaded machine held a claim).
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB), "BATCH_MAX_WAIT_SECONDS", "3600",
            "GEMINI_TIMEOUT_SECONDS", "3")));
    stack.keepAlive();
    jobs = new GatheredJobs(stack);
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static String status(String key) {
    return jobs.analysis(key).map(analysis -> analysis.getString("status")).orElse(null);
  }

  @Test
  void documentsWait_untilAJobIsFull_thenShareOneJob() {
    long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
    List<String> first = jobs.upload("gather-full", PER_JOB - 1);
    Await.until(DEADLINE, () -> first.stream().allMatch(key -> "queued".equals(status(key))), "both queued");
    assertEquals(0, stack.reconcile().path("jobs_submitted").asInt(), "neither full nor old: no job yet");
    assertEquals(carriedOut, stack.gemini.count("batchGenerateContent.carriedOut"));

    List<String> keys = new ArrayList<>(first);
    keys.addAll(jobs.upload("gather-full-last", 1));
    Set<String> made = jobs.jobsOf(keys);

    assertEquals(1, made.size(), "one job for the three documents: " + made);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one batches.create");
    jobs.assertCompletedOnce(made.iterator().next(), keys);
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
    List<String> keys = jobs.upload("gather-ambiguous-" + failure, PER_JOB);
    Set<String> made = jobs.jobsOf(keys);

    assertEquals(1, made.size(), "one job for the three documents: " + made);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one paid job, adopted");
    jobs.assertCompletedOnce(made.iterator().next(), keys);
  }

  /** DocumentUploaded killed (SIGKILL) after batches.create, before the submission's commit. */
  @Test
  void aSubmitterKilledAfterBatchesCreate_losesNoDocument_andMakesOnePaidJob() throws IOException {
    Path crashLog = stack.logDir.resolve("gather-crash.crashes");
    Files.deleteIfExists(crashLog);
    stack.armCrash("DocumentUploaded", "before-complete:submit", "batch:.*", crashLog);
    try {
      long carriedOut = stack.gemini.count("batchGenerateContent.carriedOut");
      List<String> keys = jobs.upload("gather-crash", PER_JOB);
      Await.until(DEADLINE, () -> kills(crashLog) == 1, "the kill");
      Set<String> made = jobs.jobsOf(keys);

      assertEquals(1, kills(crashLog), "killed once");
      assertEquals(1, made.size(), "one job for the three documents: " + made);
      assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - carriedOut, "one paid job, adopted");
      jobs.assertCompletedOnce(made.iterator().next(), keys);
    } finally {
      stack.disarmCrash("DocumentUploaded");
    }
  }

  private static long kills(Path crashLog) {
    try {
      return Files.exists(crashLog) ? Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count() : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void jobsInFlight_areCountedFromFirestore_andFreedByTheirCompletion() {
    List<String> keys = jobs.upload("gather-flight", PER_JOB);
    String job = jobs.jobsOf(keys).iterator().next();
    String gathering = jobs.analysis(keys.get(0)).orElseThrow().getString("batch");
    assertTrue(gatheringInFlight(gathering), "in flight while its job runs");
    jobs.assertCompletedOnce(job, keys);
    assertTrue(!gatheringInFlight(gathering), "freed by its completion");
  }

  private static boolean gatheringInFlight(String gathering) {
    return stack.documents("gatherings").stream().filter(g -> g.getId().equals(gathering))
        .map(g -> Boolean.TRUE.equals(g.getBoolean("inFlight"))).findFirst().orElseThrow();
  }
}
