package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.gemini.JobNames;
import dev.once.local.Await;
import dev.once.local.gemini.AnswerFault;
import dev.once.local.gemini.BatchState;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.RetryPolicy;
import java.time.Duration;
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
 * Batch jobs made from a JSONL input file of the Files API, under the real invoker: BATCH_INLINE_MAX_BYTES is lowered
 * to 1 byte, so every job of three small documents goes through the file path Gemini's 20 MB inline limit sends large
 * jobs down. End to end: one upload, one job whose lines are keyed by the documents' keys, its results file read
 * back, each document analysed, billed at batch price, published and notified once, the input file deleted with the
 * completion. And the ambiguous failures of the path, with exact counts: the upload's last request (the one that
 * stores the file) carried out and answered late, reset or 5xx, and batches.create from the file likewise: the next
 * try finds the file by its name and the job by its display name, so the project holds one input file and Gemini
 * runs one paid job.
 */
class BatchInputFileIT {
  private static final int PER_JOB = 3;
  private static final Duration DEADLINE = GatheredJobs.DEADLINE;
  private static PipelineStack stack;
  private static GatheredJobs jobs;

  @BeforeAll
  static void start() {
    // A short lease (3 s) and timeout, so an interrupted submission is resumed within seconds; a relay as patient as
    // Eventarc (60 tries a second apart ran out while a loaded machine held a claim).
    stack = PipelineStack.start(new PipelineStack.Config("batch", 3,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(PER_JOB), "BATCH_MAX_WAIT_SECONDS", "3600",
            "GEMINI_TIMEOUT_SECONDS", "3", "BATCH_INLINE_MAX_BYTES", "1")));
    stack.keepAlive();
    jobs = new GatheredJobs(stack);
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  private static String inputFile(List<String> keys) {
    return "files/once-" + jobs.analysis(keys.get(0)).orElseThrow().getString("batch");
  }

  /**
   * The job was made from the gathering's input file, one line per document keyed by its key; finished, every
   * document is analysed, billed at batch price, published and notified once, and the input file is deleted.
   */
  private static void assertFileJobCompletedOnce(String job, List<String> keys) {
    String input = inputFile(keys);
    assertTrue(stack.gemini.fileNames().contains(input), input + " among " + stack.gemini.fileNames());
    List<JsonNode> lines = stack.gemini.requests(job);
    assertEquals(Set.copyOf(keys), lines.stream().map(line -> line.path("key").asText()).collect(Collectors.toSet()),
        "one line per document, keyed by its key");
    assertTrue(lines.stream().noneMatch(line -> line.has("metadata")), "lines of a file, not inlined requests");

    jobs.assertCompletedOnce(job, keys);
    List<QueryDocumentSnapshot> billing = stack.documents("billing");
    for (String key : keys) {
      assertEquals(Boolean.TRUE, withKey(billing, key).get(0).getBoolean("batch"), "billed at batch price: " + key);
    }
    Await.until(DEADLINE, () -> !stack.gemini.fileNames().contains(input), "the input file deleted");
  }

  @Test
  void aJobOverTheInlineLimit_isMadeFromOneInputFile_andItsDocumentsCompleteOnce() {
    long uploads = stack.gemini.count("files.uploadChunk.carriedOut");
    long created = stack.gemini.count("batchGenerateContent.carriedOut");
    List<String> keys = jobs.upload("file-job", PER_JOB);
    Set<String> made = jobs.jobsOf(keys);

    assertEquals(1, made.size(), "one job for the three documents: " + made);
    assertEquals(1, stack.gemini.count("files.uploadChunk.carriedOut") - uploads, "one input file stored");
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - created, "one batches.create");
    assertFileJobCompletedOnce(made.iterator().next(), keys);
  }

  /**
   * The upload's last request stores the file and its answer is lost. Reset or late: the try made no job, so it is
   * not counted; the next one uploads again under the same name, is refused 409, and uses the stored file. A 5xx
   * (no X-Goog-Upload-Status): the SDK sends the last request again and gets the stored file.
   */
  @ParameterizedTest(name = "the upload answered {0}")
  @ValueSource(strings = {"reset", "late", "500"})
  void anUploadAnsweredAmbiguously_leavesOneInputFile_andMakesOnePaidJob(String failure) {
    long sent = stack.gemini.count("files.uploadChunk");
    int files = stack.gemini.fileNames().size();
    long created = stack.gemini.count("batchGenerateContent.carriedOut");
    stack.gemini.ambiguousNext("files.uploadChunk", 1, fault(failure));
    List<String> keys = jobs.upload("file-upload-" + failure, PER_JOB);
    Set<String> made = jobs.jobsOf(keys);

    assertEquals(1, made.size(), "one job for the three documents: " + made);
    assertEquals(files + 1, stack.gemini.fileNames().size(), "one input file stored: " + stack.gemini.fileNames());
    assertTrue(stack.gemini.count("files.uploadChunk") - sent >= 2, "its bytes sent again");
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - created, "one paid job");
    assertFileJobCompletedOnce(made.iterator().next(), keys);
  }

  /** batches.create from the file is carried out and its answer lost: the next try adopts the job. */
  @ParameterizedTest(name = "batches.create from a file answered {0}")
  @ValueSource(strings = {"reset", "late", "500"})
  void aBatchesCreateFromAFileAnsweredAmbiguously_makesOnePaidJob(String failure) {
    long stored = stack.gemini.count("files.uploadChunk.carriedOut");
    long created = stack.gemini.count("batchGenerateContent.carriedOut");
    stack.gemini.ambiguousNext("batchGenerateContent", 1, fault(failure));
    List<String> keys = jobs.upload("file-create-" + failure, PER_JOB);
    Set<String> made = jobs.jobsOf(keys);

    assertEquals(1, made.size(), "one job for the three documents: " + made);
    assertEquals(1, stack.gemini.count("batchGenerateContent.carriedOut") - created, "one paid job, adopted");
    assertEquals(1, stack.gemini.count("files.uploadChunk.carriedOut") - stored, "one input file stored");
    assertFileJobCompletedOnce(made.iterator().next(), keys);
  }

  /**
   * A responses file whose lines come back shuffled, two of them under each other's {@code key} (python-genai#1909:
   * "The response from one key wrongly put into another key"): the key alone would give each of the two the other's
   * invoice. The reference each answer copies names its own document, which proves it wherever it was filed: each goes
   * to the document it names, nothing runs again, and each ends with its own answer, once.
   */
  @Test
  void twoLinesAnsweredUnderEachOthersKey_goToTheDocumentsTheyName_nothingRunAgain() {
    List<String> keys = jobs.upload("file-misfiled", PER_JOB);
    String job = jobs.jobsOf(keys).iterator().next();
    long made = stack.gemini.count("batchGenerateContent.carriedOut");

    stack.gemini.answerFaults(job, AnswerFault.SHUFFLED, AnswerFault.MISFILED);
    stack.gemini.finish(job, BatchState.SUCCEEDED);
    jobs.awaitReconciling(() -> keys.stream().allMatch(k -> !stack.notifiedWith(k).isEmpty()),
        "every document of " + job + " notified");
    Await.until(DEADLINE, stack::relayIdle, "the relay idle");

    for (String key : keys) {
      QueryDocumentSnapshot analysis = jobs.analysis(key).orElseThrow();
      assertEquals("analysed", analysis.getString("status"), key);
      assertEquals(JobNames.reference(analysis.getString("batch"), analysis.getId()),
          ((Map<?, ?>) analysis.get("invoice")).get("documentReference"), key + " holds another document's answer");
      assertEquals(job, analysis.getString("job"), key + " answered by its first job");
      assertEquals(null, analysis.getLong("reruns"), key);
      assertEquals(1, withKey(stack.documents("billing"), key).size(), "billed " + key + " once");
      assertEquals(1, attributed(stack.published(), key).size(), "published " + key + " once");
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
    assertEquals(made, stack.gemini.count("batchGenerateContent.carriedOut"), "no other job");
  }

  private static AmbiguousFailure fault(String failure) {
    return switch (failure) {
      case "reset" -> AmbiguousFailure.RESET;
      case "late" -> AmbiguousFailure.late(Duration.ofSeconds(5)); // past GEMINI_TIMEOUT_SECONDS
      default -> AmbiguousFailure.serverError(500);
    };
  }
}
