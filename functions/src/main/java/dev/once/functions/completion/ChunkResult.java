package dev.once.functions.completion;

import dev.once.ledger.ResultCodec;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.ResultMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one chunk of a batch job's completion did: the result summaries it publishes (none for a document sent back
 * to the queue), how many answers were matched each way, how many documents were run again, given up or refused, how
 * many answers went to no document, and what the answers cost. Its ledger record keeps it as {@link #CODEC} writes it.
 *
 * @param model the model of the last answer that cost something (null: none did)
 */
record ChunkResult(List<ResultMessage> summaries, Map<String, Integer> matched, Map<Count, Integer> counts,
    long costMicroUsd, String model) {

  /** What a chunk counts, by its name in the record and the completion's log line. */
  enum Count {
    RERUN("rerun"),
    GAVE_UP("gaveUp"),
    REFUSED("refused"),
    UNATTRIBUTED("unattributed");

    final String field;

    Count(String field) {
      this.field = field;
    }
  }

  static final String DOCUMENTS = "documents";
  static final String MATCHED = "matched";
  static final String COST = "costMicroUsd";
  static final String MODEL = "model";

  ChunkResult {
    summaries = List.copyOf(summaries);
    matched = Map.copyOf(matched);
    counts = Map.copyOf(counts);
  }

  /** The chunk's documents' shares added up. */
  static ChunkResult of(List<DocumentResult> results) {
    List<ResultMessage> summaries = new ArrayList<>();
    Map<String, Integer> matched = new LinkedHashMap<>();
    Map<Count, Integer> counts = new LinkedHashMap<>();
    long cost = 0;
    String model = null;
    for (DocumentResult result : results) {
      if (result.summary() != null) {
        summaries.add(result.summary());
      }
      cost += result.costMicroUsd();
      model = result.model() == null ? model : result.model();
      if (result.match() != null) {
        matched.merge(result.match().name().toLowerCase(Locale.ROOT), 1, Integer::sum);
      }
      if (result.count() != null) {
        counts.merge(result.count(), 1, Integer::sum);
      }
    }
    return new ChunkResult(summaries, matched, counts, cost, model);
  }

  /** With the answers that went to no document: how many, and what they cost (Google bills them). */
  ChunkResult withUnattributed(int answers, long cost, String answeredBy) {
    Map<Count, Integer> more = new LinkedHashMap<>(counts);
    more.put(Count.UNATTRIBUTED, answers);
    boolean priced = answeredBy != null;
    return new ChunkResult(summaries, matched, more, costMicroUsd + (priced ? cost : 0),
        model != null ? model : answeredBy);
  }

  /** Its documents given up for good, whatever the reason: the operators' given-up count. */
  int givenUp() {
    return (int) summaries.stream().filter(summary -> summary.is(DocumentStatus.FAILED)).count();
  }

  int count(Count count) {
    return counts.getOrDefault(count, 0);
  }

  /** The chunk's ledger record: the one place its field names are spelled; read back as any version wrote it. */
  static final ResultCodec<ChunkResult> CODEC = new ResultCodec<>() {
    public Map<String, Object> encode(ChunkResult chunk) {
      return chunk.toMap();
    }

    public ChunkResult decode(Map<String, Object> fields) {
      return fromMap(fields);
    }
  };

  private Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put(DOCUMENTS, summaries.stream().map(ResultMessage.CODEC::encode).toList());
    putTallies(map, matched, counts, costMicroUsd, model);
    return map;
  }

  /**
   * What a chunk's record and its job's record both keep, written the same way: how the answers were matched, the
   * counts, and, when an answer cost something, the cost and the model.
   */
  static void putTallies(Map<String, Object> map, Map<String, Integer> matched, Map<Count, Integer> counts, long cost,
      String model) {
    map.put(MATCHED, matched);
    counts.forEach((count, n) -> map.put(count.field, n));
    if (model != null) {
      map.put(COST, cost);
      map.put(MODEL, model);
    }
  }

  static Map<String, Integer> readMatched(Map<String, Object> map) {
    Map<String, Integer> matched = new LinkedHashMap<>();
    if (map.get(MATCHED) instanceof Map<?, ?> byHow) {
      byHow.forEach((how, n) -> matched.put(String.valueOf(how), n instanceof Number number ? number.intValue() : 0));
    }
    return matched;
  }

  static Map<Count, Integer> readCounts(Map<String, Object> map) {
    Map<Count, Integer> counts = new LinkedHashMap<>();
    for (Count count : Count.values()) {
      if (map.get(count.field) instanceof Number n) {
        counts.put(count, n.intValue());
      }
    }
    return counts;
  }

  /** The model of the last answer that cost something (null: none did). */
  static String readModel(Map<String, Object> map) {
    return map.get(MODEL) == null ? null : String.valueOf(map.get(MODEL));
  }

  /** What the answers cost: 0 unless a model is named. */
  static long readCost(Map<String, Object> map) {
    return readModel(map) != null && map.get(COST) instanceof Number n ? n.longValue() : 0;
  }

  private static ChunkResult fromMap(Map<String, Object> map) {
    List<ResultMessage> summaries = new ArrayList<>();
    if (map.get(DOCUMENTS) instanceof List<?> documents) {
      for (Object document : documents) {
        if (document instanceof Map<?, ?> summary) {
          Map<String, Object> copy = new LinkedHashMap<>();
          summary.forEach((field, value) -> copy.put(String.valueOf(field), value));
          summaries.add(ResultMessage.CODEC.decode(copy));
        }
      }
    }
    return new ChunkResult(summaries, readMatched(map), readCounts(map), readCost(map), readModel(map));
  }
}
