package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.Content;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.Part;
import dev.once.key.IdempotencyKey;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.observe.Log;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Finding the job an earlier try made, against the stand-in, whose listing order (oldest first) is not the one the
 * old look assumed: Google documents none, so the look must read the whole listing however it is ordered.
 */
class BatchJobsTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static GeminiStandIn gemini;
  private static Client client;

  @BeforeAll
  static void start() {
    gemini = GeminiStandIn.start();
    client = StandInClient.of(gemini);
  }

  @AfterAll
  static void stop() {
    client.close();
    gemini.close();
  }

  /** More than the 1,000 jobs the old look read, listed before the one it looks for. */
  @Test
  void theJobAnEarlierTryMade_isFound_behindMoreThanAThousandOtherJobs_whateverTheListingsOrder() {
    for (int i = 0; i < 1_050; i++) {
      foreignJob("another team's job " + i);
    }
    IdempotencyKey document = IdempotencyKey.of("gcs:inbox/find/late.pdf#1");
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty());
    String made = jobs.submit(document, "%PDF-1.4 x".getBytes(StandardCharsets.US_ASCII), "application/pdf")
        .name().orElseThrow();
    long listsBefore = gemini.count("batches.list");

    Optional<BatchJob> found = jobs.findSubmitted(document);

    assertEquals(Optional.of(made), found.flatMap(BatchJob::name));
    assertEquals(2, gemini.count("batches.list") - listsBefore, "1,051 jobs: two pages of 1,000, read to the end");
    assertTrue(jobs.findSubmitted(IdempotencyKey.of("gcs:inbox/find/never.pdf#1")).isEmpty(),
        "a document no try made a job for: none, once the last page is read");
  }

  /**
   * The SDK drops a failed job's operation error for the Gemini API (it maps {@code error} from Vertex AI only): read
   * from the operation, an outage's 13 and a poison request's 3 tell apart; a job that succeeded gives none.
   */
  @Test
  void whyAJobFailed_isReadFromItsOperation_whichTheSdkDoesNotMap() {
    JobErrors errors = new JobErrors(Optional.of(gemini.baseUrl()), "test-key", Duration.ofSeconds(30));
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty(), BatchJobs.DEFAULT_INLINE_MAX_BYTES,
        new ModelWatch(Log.stdout()), errors);
    IdempotencyKey outage = IdempotencyKey.of("gcs:inbox/why/outage.pdf#1");
    IdempotencyKey poison = IdempotencyKey.of("gcs:inbox/why/poison.pdf#1");
    IdempotencyKey fine = IdempotencyKey.of("gcs:inbox/why/fine.pdf#1");
    String failed = jobs.submit(outage, "%PDF-1.4 x".getBytes(StandardCharsets.US_ASCII), "application/pdf")
        .name().orElseThrow();
    gemini.finish(failed, BatchState.FAILED);
    gemini.poison(poison.value());
    String poisoned = jobs.submit(poison, "%PDF-1.4 y".getBytes(StandardCharsets.US_ASCII), "application/pdf")
        .name().orElseThrow();
    gemini.finish(poisoned, BatchState.SUCCEEDED);
    String succeeded = jobs.submit(fine, "%PDF-1.4 z".getBytes(StandardCharsets.US_ASCII), "application/pdf")
        .name().orElseThrow();
    gemini.finish(succeeded, BatchState.SUCCEEDED);

    BatchJob outageJob = jobs.find(failed).orElseThrow();
    assertTrue(outageJob.error().isEmpty(), "the SDK maps no error: if it ever does, this reading can go");
    assertEquals(Optional.of(13), jobs.failure(outageJob).map(BatchError::code));
    assertTrue(jobs.failure(outageJob).orElseThrow().transientFailure());
    BatchError refused = jobs.failure(jobs.find(poisoned).orElseThrow()).orElseThrow();
    assertEquals(List.of(3, false), List.of(refused.code(), refused.transientFailure()));
    assertEquals(Optional.empty(), jobs.failure(jobs.find(succeeded).orElseThrow()));
  }

  /** Another team's job, ended (a project has at most 100 running, and its listing holds the ended ones too). */
  private static void foreignJob(String displayName) {
    String name = client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(InlinedRequest.builder()
        .contents(List.of(Content.fromParts(Part.fromText("hello")))).build()).build(),
        CreateBatchJobConfig.builder().displayName(displayName).build()).name().orElseThrow();
    gemini.finish(name, BatchState.SUCCEEDED);
  }
}
