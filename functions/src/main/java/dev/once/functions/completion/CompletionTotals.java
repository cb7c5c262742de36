package dev.once.functions.completion;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the chunks of a batch job's completion did, added up into the job's completion record.
 */
final class CompletionTotals {
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
  JobCompletion completion(String job, String state, int chunks) {
    return new JobCompletion(job, state, chunks, documents, givenUp, matched, counts, model == null ? 0 : cost, model);
  }
}
