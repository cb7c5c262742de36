package dev.once.functions.completion;

import dev.once.ledger.ResultCodec;
import dev.once.pipeline.EventCounts;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A batch job's completion record: its name, the state it ended in, how many chunks, and what its chunks did, added
 * up ({@link CompletionTotals}). {@link #CODEC} is the one place its field names are spelled.
 *
 * @param model the model of the last answer that cost something (null: none did, and {@code costMicroUsd} is 0)
 */
public record JobCompletion(String job, String state, int chunks, int documents, int givenUp,
    Map<String, Integer> matched,
    Map<ChunkResult.Count, Integer> counts, long costMicroUsd, String model) {
  private static final String JOB = "job";
  private static final String STATE = "state";
  private static final String CHUNKS = "chunks";

  public JobCompletion {
    matched = Map.copyOf(matched);
    counts = counts.isEmpty() ? Map.of() : Map.copyOf(new EnumMap<>(counts));
  }

  static final ResultCodec<JobCompletion> CODEC = new ResultCodec<>() {
    public Map<String, Object> encode(JobCompletion done) {
      Map<String, Object> map = new LinkedHashMap<>();
      map.put(JOB, done.job());
      map.put(STATE, done.state());
      map.put(CHUNKS, done.chunks());
      map.put(ChunkResult.DOCUMENTS, done.documents());
      map.put(EventCounts.GIVEN_UP, done.givenUp());
      map.put(ChunkResult.MATCHED, done.matched());
      done.counts().forEach((count, n) -> map.put(count.field, n));
      if (done.model() != null) {
        map.put(ChunkResult.COST, done.costMicroUsd());
        map.put(ChunkResult.MODEL, done.model());
      }
      return map;
    }

    public JobCompletion decode(Map<String, Object> fields) {
      Map<String, Integer> matched = new LinkedHashMap<>();
      if (fields.get(ChunkResult.MATCHED) instanceof Map<?, ?> byHow) {
        byHow.forEach((how, n) -> matched.put(String.valueOf(how), whole(n)));
      }
      Map<ChunkResult.Count, Integer> counts = new EnumMap<>(ChunkResult.Count.class);
      for (ChunkResult.Count count : ChunkResult.Count.values()) {
        if (fields.get(count.field) instanceof Number n) {
          counts.put(count, n.intValue());
        }
      }
      String model = fields.get(ChunkResult.MODEL) == null ? null : String.valueOf(fields.get(ChunkResult.MODEL));
      return new JobCompletion(text(fields.get(JOB)), text(fields.get(STATE)), whole(fields.get(CHUNKS)),
          whole(fields.get(ChunkResult.DOCUMENTS)), whole(fields.get(EventCounts.GIVEN_UP)), matched, counts,
          model == null ? 0 : fields.get(ChunkResult.COST) instanceof Number n ? n.longValue() : 0, model);
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
    for (ChunkResult.Count count : new ChunkResult.Count[] {ChunkResult.Count.RERUN, ChunkResult.Count.GAVE_UP,
        ChunkResult.Count.REFUSED, ChunkResult.Count.UNATTRIBUTED}) {
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
