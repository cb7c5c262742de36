package dev.once.functions;

import java.util.Map;

/**
 * What the {@code analyse} effect records in batch mode: the document queued for a job (records of older versions:
 * the job made for it alone), not an analysis, which comes with the job's completion. A sync analysis's result is
 * its published summary, which always has a status.
 */
final class QueuedAnalysis {
  private static final Map<String, Object> RESULT = Map.of("queued", true, "mode", "batch");

  private QueuedAnalysis() {}

  /** The result recorded when a document is queued. */
  static Map<String, Object> result() {
    return RESULT;
  }

  /** Whether an {@code analyse} result is a queued (or submitted) document's, not an analysis. */
  static boolean is(Map<String, Object> result) {
    return result.containsKey("queued") || result.containsKey("job") && !result.containsKey("status");
  }
}
