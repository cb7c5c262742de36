package dev.once.functions.completion;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A job's completion record, as the completion's report and log line read it back. */
class JobCompletionTest {
  @Test
  void aJobsRecord_readsBackWhole_itsCostPastTwoBillionMicroUsdIncluded() {
    long cost = 3_000_000_000L; // $3,000: more than an int holds
    JobCompletion done = new JobCompletion("batches/1", "JOB_STATE_SUCCEEDED", 2, 150, 3, Map.of("reference", 148),
        Map.of(ChunkResult.Count.RERUN, 2, ChunkResult.Count.UNATTRIBUTED, 1), cost, "gemini-3.5-flash-lite");

    Map<String, Object> fields = JobCompletion.CODEC.encode(done);
    JobCompletion read = JobCompletion.CODEC.decode(fields);

    assertEquals(done, read);
    assertEquals(cost, read.details().get(ChunkResult.COST));
    assertEquals(List.of(ChunkResult.COST, ChunkResult.MODEL, ChunkResult.MATCHED, "rerun", "unattributed"),
        List.copyOf(read.details().keySet()));
  }

  @Test
  void aJobNoAnswerOfWhichCostAnything_hasNoCostInItsRecord() {
    JobCompletion done = new JobCompletion("batches/2", "JOB_STATE_EXPIRED", 1, 4, 4, Map.of(), Map.of(), 0, null);

    Map<String, Object> fields = JobCompletion.CODEC.encode(done);

    assertEquals(false, fields.containsKey(ChunkResult.COST));
    assertEquals(done, JobCompletion.CODEC.decode(fields));
  }
}
