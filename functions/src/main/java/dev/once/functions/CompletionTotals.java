package dev.once.functions;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the chunks of a batch job's completion did, added up: the job's completion record ({@link #toMap}) and, from
 * it, what its report and log line carry ({@link #details}).
 */
final class CompletionTotals {
  static final String JOB = "job";
  static final String STATE = "state";
  static final String CHUNKS = "chunks";

  private long cost;
  private String model;
  private int documents;
  private int givenUp;
  private final Map<ChunkResult.Count, Integer> counts = new EnumMap<>(ChunkResult.Count.class);
  private final Map<String, Integer> matched = new LinkedHashMap<>();

  void add(ChunkResult chunk) {
    documents += chunk.summaries().size();
    givenUp += chunk.givenUp();
    if (chunk.model() != null) {
      cost += chunk.costMicroUsd();
      model = chunk.model();
    }
    chunk.counts().forEach((count, n) -> counts.merge(count, n, Integer::sum));
    chunk.matched().forEach((how, n) -> matched.merge(how, n, Integer::sum));
  }

  /** The job's completion record: its name, the state it ended in, how many chunks, and the totals. */
  Map<String, Object> toMap(String job, String state, int chunks) {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put(JOB, job);
    map.put(STATE, state);
    map.put(CHUNKS, chunks);
    map.put(ChunkResult.DOCUMENTS, documents);
    map.put(EventCounts.GIVEN_UP, givenUp);
    map.put(ChunkResult.MATCHED, Map.copyOf(matched));
    counts.forEach((count, n) -> map.put(count.field, n));
    if (model != null) {
      map.put(ChunkResult.COST, cost);
      map.put(ChunkResult.MODEL, model);
    }
    return map;
  }

  /** The fields of a job's completion record a report carries, in the order its log line shows them. */
  static Map<String, Object> details(Map<String, Object> record) {
    Map<String, Object> details = new LinkedHashMap<>();
    for (String field : new String[] {ChunkResult.COST, ChunkResult.MODEL, ChunkResult.MATCHED,
        ChunkResult.Count.RERUN.field, ChunkResult.Count.GAVE_UP.field, ChunkResult.Count.REFUSED.field,
        ChunkResult.Count.UNATTRIBUTED.field}) {
      if (record.get(field) != null) {
        details.put(field, record.get(field));
      }
    }
    return details;
  }
}
