package dev.once.functions.completion;

import dev.once.ledger.ResultCodec;
import dev.once.pipeline.EventCounts;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A batch job's completion record: its name, the state it ended in, how many chunks, and what its chunks did, added
 * up ({@link CompletionTotals}). {@link #CODEC} is the one place its field names are spelled.
 *
 * @param model the model of the last answer that cost something (null: none did, and {@code costMicroUsd} is 0)
 */
record JobCompletion(String job, String state, int chunks, int documents, int givenUp,
    Map<String, Integer> matched,
    Map<ChunkResult.Count, Integer> counts, long costMicroUsd, String model) {
  private static final String JOB = "job";
  private static final String STATE = "state";
  private static final String CHUNKS = "chunks";

  JobCompletion {
    matched = Map.copyOf(matched);
    counts = Map.copyOf(counts);
  }

  static final ResultCodec<JobCompletion> CODEC = new ResultCodec<>() {
    public Map<String, Object> encode(JobCompletion done) {
      Map<String, Object> map = new LinkedHashMap<>();
      map.put(JOB, done.job());
      map.put(STATE, done.state());
      map.put(CHUNKS, done.chunks());
      map.put(ChunkResult.DOCUMENTS, done.documents());
      map.put(EventCounts.GIVEN_UP, done.givenUp());
      ChunkResult.putTallies(map, done.matched(), done.counts(), done.costMicroUsd(), done.model());
      return map;
    }

    public JobCompletion decode(Map<String, Object> fields) {
      return new JobCompletion(text(fields.get(JOB)), text(fields.get(STATE)), whole(fields.get(CHUNKS)),
          whole(fields.get(ChunkResult.DOCUMENTS)), whole(fields.get(EventCounts.GIVEN_UP)),
          ChunkResult.readMatched(fields), ChunkResult.readCounts(fields), ChunkResult.readCost(fields),
          ChunkResult.readModel(fields));
    }
  };

  /** What the completion's report and log line carry besides its counts, in the order the line shows them. */
  Map<String, Object> details() {
    Map<String, Object> details = new LinkedHashMap<>();
    if (model != null) {
      details.put(ChunkResult.COST, costMicroUsd);
      details.put(ChunkResult.MODEL, model);
    }
    details.put(ChunkResult.MATCHED, matched);
    for (ChunkResult.Count count : ChunkResult.Count.values()) {
      if (counts.containsKey(count)) {
        details.put(count.field, counts.get(count));
      }
    }
    return details;
  }

  private static int whole(Object value) {
    return value instanceof Number n ? n.intValue() : 0;
  }

  private static String text(Object value) {
    return value == null ? null : String.valueOf(value);
  }
}
