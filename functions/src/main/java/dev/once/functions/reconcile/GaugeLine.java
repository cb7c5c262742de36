package dev.once.functions.reconcile;

import dev.once.observe.Log;
import dev.once.pipeline.BatchGauges;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The reconciler's line of batch gauges ({@link BatchGauges}), written once a run whatever the run came to — a
 * reconciler that cannot list Gemini still says how long documents wait. A failure to read them is its own ERROR line
 * and changes nothing of the run.
 */
public final class GaugeLine {
  private final Supplier<BatchGauges> gauges;
  private final int maxJobsInFlight;
  private final Log log;

  public GaugeLine(Supplier<BatchGauges> gauges, int maxJobsInFlight, Log log) {
    this.gauges = gauges;
    this.maxJobsInFlight = maxJobsInFlight;
    this.log = log;
  }

  public void log() {
    try {
      log.info(BatchGauges.MESSAGE, Map.of("function", ReconcileFlow.FUNCTION,
          BatchGauges.FIELD, gauges.get().read().toLog(maxJobsInFlight)));
    } catch (RuntimeException e) {
      log.error("the reconciler could not read the batch gauges",
          Map.of("function", ReconcileFlow.FUNCTION, "error", String.valueOf(e)));
    }
  }
}
