package dev.once.functions;

import dev.once.observe.Log;
import dev.once.pipeline.BatchGauges;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The reconciler's line of batch gauges ({@link BatchGauges}), written once a run whatever the run came to — a
 * reconciler that cannot list Gemini still says how long documents wait. A failure to read them is its own ERROR line
 * and changes nothing of the run.
 */
final class GaugeLine {
  private final Supplier<BatchGauges> gauges;
  private final int maxJobsInFlight;
  private final Log log;

  GaugeLine(Supplier<BatchGauges> gauges, int maxJobsInFlight, Log log) {
    this.gauges = gauges;
    this.maxJobsInFlight = maxJobsInFlight;
    this.log = log;
  }

  void log() {
    try {
      log.info(BatchGauges.MESSAGE, Map.of("function", GeminiReconciler.NAME,
          BatchGauges.FIELD, gauges.get().read().toLog(maxJobsInFlight)));
    } catch (RuntimeException e) {
      log.error("the reconciler could not read the batch gauges",
          Map.of("function", GeminiReconciler.NAME, "error", String.valueOf(e)));
    }
  }
}
