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

  GaugeLine(Supplier<BatchGauges> gauges, int maxJobsInFlight) {
    this.gauges = gauges;
    this.maxJobsInFlight = maxJobsInFlight;
  }

  void log() {
    try {
      Log.stdout().info(BatchGauges.MESSAGE, Map.of("function", GeminiReconciler.NAME,
          BatchGauges.FIELD, gauges.get().read().toLog(maxJobsInFlight)));
    } catch (RuntimeException e) {
      Log.stdout().error("the reconciler could not read the batch gauges",
          Map.of("function", GeminiReconciler.NAME, "error", String.valueOf(e)));
    }
  }
}
