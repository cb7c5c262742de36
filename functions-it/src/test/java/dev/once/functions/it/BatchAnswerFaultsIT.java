package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.JobNames;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.AnswerFault;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A finished batch job's answers as users of Google's SDKs report them, not as the docs promise them, end to end under
 * the real invoker: out of order and without their metadata (python-genai#1909, #2008), two filed under each other's
 * key, half answered with a retryable internal error (#1341), a job that expires or is cancelled having answered half
 * its requests, one that keeps failing (an outage's error) and one failed by a poison document. Jobs of four
 * (nothing made early); every answer of the stand-in names the document it was generated for (it copies the
 * document's reference from the request), so each document is checked to hold its own answer. Per document, exactly:
 * one analysis with its own answer (or, given up at the cap, failed), one bill, one publication, one notification; and
 * exactly the documents whose answer could not be used, or never came, are run again, from an input file.
 */
class BatchAnswerFaultsIT {
  private static final int PER_JOB = 4;
  private static final int MAX_ATTEMPTS = 2;
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static final Duration RECONCILE_EVERY = Duration.ofSeconds(2);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // A patient relay, as Eventarc is: 30 tries a second apart are half a minute, shorter than a loaded machine can
    // hold a claim.
    stack = PipelineStack.start(new PipelineStack.Config("batch", 10,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB), "BATCH_MAX_WAIT_SECONDS", "3600",
            "ONCE_MAX_ATTEMPTS", String.valueOf(MAX_ATTEMPTS))));
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static List<String> upload(String cell) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < PER_JOB; i++) {
      keys.add(key(stack.upload(String.format("faults/%s/doc-%d.pdf", cell, i), InvoicePdf.of(cell + i),
          "application/pdf")));
    }
    return keys;
  }

  private static QueryDocumentSnapshot analysis(String key) {
    List<QueryDocumentSnapshot> found = withKey(stack.documents("analyses"), key);
    assertTrue(found.size() <= 1, "one analysis of " + key);
    return found.isEmpty() ? null : found.get(0);
  }

  /**
   * The one job the cell's four documents were gathered into (a full job: made at the fourth upload, or, when that
   * upload's submission failed — a call to Gemini lost on a loaded machine — by the reconciler, as Cloud Scheduler
   * runs it).
   */
  private static String jobOf(List<String> keys) {
    stack.awaitReconciling(DEADLINE, RECONCILE_EVERY, () -> keys.stream().allMatch(key -> analysis(key) != null
        && "submitted".equals(analysis(key).getString("status"))), "the cell's job submitted");
    Set<String> jobs = new LinkedHashSet<>();
    keys.forEach(key -> jobs.add(analysis(key).getString("job")));
    assertEquals(1, jobs.size(), "one job of four: " + jobs);
    return jobs.iterator().next();
  }

  /**
   * Ends the cell's job as {@code state} with {@code faults}, then, as Cloud Scheduler would, runs the reconciler (which
   * submits the documents sent back to the queue) and lets every later job succeed, until every document is notified.
   */
  private static void finish(String job, BatchState state, List<String> keys, AnswerFault... faults) {
    stack.gemini.answerFaults(job, faults);
    stack.gemini.finish(job, state);
    stack.awaitReconciling(DEADLINE, RECONCILE_EVERY, () -> {
      stack.gemini.completeAll(); // the jobs of documents run again answer as Google documents
      return keys.stream().allMatch(key -> !stack.notifiedWith(key).isEmpty());
    }, "every document of the cell notified");
    Await.until(DEADLINE, stack::relayIdle, "the relay idle");
  }

  /**
   * Analysed once, with its own answer: the reference the answer names is the one its last job's request gave it
   * (the gathering its analysis names), and that job's requests held its key. Billed, published, notified once.
   */
  private static void assertOwnAnswer(String key) {
    QueryDocumentSnapshot analysis = analysis(key);
    assertEquals("analysed", analysis.getString("status"), key);
    @SuppressWarnings("unchecked")
    Map<String, Object> invoice = (Map<String, Object>) analysis.get("invoice");
    assertEquals(JobNames.reference(analysis.getString("batch"), analysis.getId()), invoice.get("documentReference"),
        key + " holds another document's answer");
    assertTrue(stack.gemini.requests(analysis.getString("job")).stream().anyMatch(request -> key.equals(
        request.path("metadata").path(BatchJobs.DOCUMENT_KEY).asText(request.path("key").asText()))),
        "its job held its request");
    assertOnce(key);
  }

  private static void assertOnce(String key) {
    assertEquals(1, withKey(stack.documents("billing"), key).size(), "billed " + key + " once");
    assertEquals(1, attributed(stack.published(), key).size(), "published " + key + " once");
    assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
  }

  private static long reruns(String key) {
    Long reruns = analysis(key).getLong("reruns");
    return reruns == null ? 0 : reruns;
  }

  /** The documents run again went into one job made from an input file (its lines keyed). */
  private static void assertRunAgainFromAFile(List<String> rerun, String first) {
    Set<String> jobs = new LinkedHashSet<>();
    rerun.forEach(key -> jobs.add(analysis(key).getString("job")));
    assertEquals(1, jobs.size(), "one job for the documents run again: " + jobs);
    String second = jobs.iterator().next();
    assertTrue(!second.equals(first));
    List<JsonNode> lines = stack.gemini.requests(second);
    assertEquals(rerun.size(), lines.size(), "holding them only");
    assertTrue(lines.stream().allMatch(line -> line.has("key") && !line.has("metadata")), "from an input file");
  }

  @Test
  void answersShuffledAndWithoutTheirMetadata_eachGoToTheirOwnDocument_nothingRunAgain() {
    List<String> keys = upload("shuffled");
    String job = jobOf(keys);
    long jobs = stack.gemini.count("batchGenerateContent.carriedOut");

    finish(job, BatchState.SUCCEEDED, keys, AnswerFault.SHUFFLED, AnswerFault.NO_METADATA);

    keys.forEach(BatchAnswerFaultsIT::assertOwnAnswer);
    keys.forEach(key -> assertEquals(0, reruns(key)));
    assertEquals(jobs, stack.gemini.count("batchGenerateContent.carriedOut"), "no other job");
  }

  /** Each names its own document's reference, which proves it: used where it belongs, nothing run again. */
  @Test
  void twoAnswersFiledUnderEachOthersKey_goToTheDocumentsTheyName_nothingRunAgain() {
    List<String> keys = upload("misfiled");
    String job = jobOf(keys);
    long jobs = stack.gemini.count("batchGenerateContent.carriedOut");

    finish(job, BatchState.SUCCEEDED, keys, AnswerFault.MISFILED);

    keys.forEach(BatchAnswerFaultsIT::assertOwnAnswer);
    keys.forEach(key -> assertEquals(0, reruns(key), key));
    keys.forEach(key -> assertEquals(job, analysis(key).getString("job"), key));
    assertEquals(jobs, stack.gemini.count("batchGenerateContent.carriedOut"), "no other job");
  }

  /**
   * Half the job's requests answered with Google's retryable internal error (python-genai#1341): those documents run
   * again, counted, and are analysed in the next job; nobody is failed for Google's error.
   */
  @Test
  void requestsAnsweredWithAnInternalError_runAgainInAFileJob_andAreAnalysed() {
    List<String> keys = upload("internal");
    String job = jobOf(keys);
    List<String> errored = stack.gemini.requests(job).subList(0, PER_JOB / 2).stream()
        .map(request -> request.at("/metadata/" + BatchJobs.DOCUMENT_KEY).asText()).toList();

    finish(job, BatchState.SUCCEEDED, keys, AnswerFault.INTERNAL_ERRORS);

    keys.forEach(BatchAnswerFaultsIT::assertOwnAnswer);
    for (String key : keys) {
      assertEquals(errored.contains(key) ? 1 : 0, reruns(key), key);
    }
    assertRunAgainFromAFile(errored, job);
  }

  /**
   * A job Gemini fails as a whole for what one request holds (INVALID_ARGUMENT): split in halves, uncounted, until the
   * poison document is alone; its innocent companions are analysed without a try counted against them, and the poison
   * one alone is given up at the cap. Jobs, exactly: the first, two halves, the poisoned half's two, one more alone.
   */
  @Test
  void aJobFailedByOnePoisonDocument_isSplitUntilItIsAlone_theOthersAreAnalysed() {
    List<String> keys = upload("poison");
    String job = jobOf(keys);
    String poison = keys.get(2);
    stack.gemini.poison(poison);
    long jobs = stack.gemini.count("batchGenerateContent.carriedOut");

    finish(job, BatchState.SUCCEEDED, keys);

    assertEquals(jobs + 5, stack.gemini.count("batchGenerateContent.carriedOut"), "2 halves, 2 quarters, 1 alone");
    keys.stream().filter(key -> !key.equals(poison)).forEach(key -> {
      assertOwnAnswer(key);
      assertEquals(0, reruns(key), key + ": a split is not its try");
    });
    QueryDocumentSnapshot analysis = analysis(poison);
    assertEquals("failed", analysis.getString("status"), poison);
    assertTrue(analysis.getString("reason").startsWith("gave up after 2 batch jobs gave it no answer"),
        analysis.getString("reason"));
    assertEquals(0, withKey(stack.documents("billing"), poison).size(), "nothing billed: no answer came");
    assertEquals(1, attributed(stack.published(), poison).size(), "published once");
    assertEquals(1, stack.notifiedWith(poison).size(), "notified once");
  }

  @Test
  void aJobThatExpiredHalfWay_hasItsAnswersUsed_andTheRestRunAgain() {
    assertHalfAnsweredJob("expired", BatchState.EXPIRED);
  }

  @Test
  void aJobCancelledHalfWay_hasItsAnswersUsed_andTheRestRunAgain() {
    assertHalfAnsweredJob("cancelled", BatchState.CANCELLED);
  }

  private static void assertHalfAnsweredJob(String cell, BatchState state) {
    List<String> keys = upload(cell);
    String job = jobOf(keys);
    List<String> answered = stack.gemini.requests(job).subList(0, PER_JOB / 2).stream()
        .map(request -> request.at("/metadata/" + BatchJobs.DOCUMENT_KEY).asText()).toList();
    List<String> unanswered = keys.stream().filter(key -> !answered.contains(key)).toList();

    finish(job, state, keys, AnswerFault.PARTIAL);

    keys.forEach(BatchAnswerFaultsIT::assertOwnAnswer);
    answered.forEach(key -> assertEquals(job, analysis(key).getString("job"), "billed from the " + state + " job"));
    unanswered.forEach(key -> assertEquals(1, reruns(key), key));
    assertRunAgainFromAFile(unanswered, job);
  }

  /** Jobs that keep failing: each document is run in ONCE_MAX_ATTEMPTS (2) jobs, then given up, saying so. */
  @Test
  void documentsWhoseJobsKeepFailing_areGivenUpAtTheCap_publishedAndNotifiedOnce() {
    List<String> keys = upload("failing");
    String job = jobOf(keys);
    long jobs = stack.gemini.count("batchGenerateContent.carriedOut");
    stack.gemini.defaultOutcome(BatchState.FAILED);
    try {
      finish(job, BatchState.FAILED, keys);
    } finally {
      stack.gemini.defaultOutcome(BatchState.SUCCEEDED);
    }

    assertEquals(jobs + 1, stack.gemini.count("batchGenerateContent.carriedOut"), "one job more, then none");
    for (String key : keys) {
      QueryDocumentSnapshot analysis = analysis(key);
      assertEquals("failed", analysis.getString("status"), key);
      assertTrue(analysis.getString("reason").startsWith("gave up after 2 batch jobs gave it no answer"),
          analysis.getString("reason"));
      assertEquals(0, withKey(stack.documents("billing"), key).size(), "nothing billed: no answer came");
      assertEquals(1, attributed(stack.published(), key).size(), "published " + key + " once");
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
  }
}
