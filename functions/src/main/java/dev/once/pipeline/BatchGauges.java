package dev.once.pipeline;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Batch mode as it stands now: the documents queued and gathered, the oldest queued one, and the gatherings in flight
 * by state. The reconciler logs it once a run as one line ({@value #MESSAGE}, its {@value #FIELD} in seconds and
 * counts), which terraform/observability.tf turns into the metrics of the dashboard's batch panels and of the alerts
 * on the oldest wait and the oldest job; {@code once stats} prints it. Firestore's is {@link FirestoreBatchGauges}.
 */
public interface BatchGauges {
  /** The message of the reconciler's line. */
  String MESSAGE = "batch gauges";
  /** The line's field holding the gauges. */
  String FIELD = "gauges";

  /**
   * What was read, at {@code at} (the store's time, so ages are judged by its clock). The gatherings in flight are
   * {@code gathering} (open, their members not sealed yet), {@code sealed} (sealed, their job not made yet) and
   * {@code submitted} (their job made, not completed); the oldest dates are null when there is none.
   */
  record Reading(Instant at, long queued, long gathered, Instant oldestQueuedAt, long gathering, long sealed,
      long submitted, Instant oldestSubmittedAt) {
    public long jobsInFlight() {
      return gathering + sealed + submitted;
    }

    /** How long the oldest queued document has waited (zero when none waits). */
    public Duration oldestWait() {
      return age(oldestQueuedAt);
    }

    /** How long ago the oldest job still running was submitted (zero when none runs). */
    public Duration oldestJob() {
      return age(oldestSubmittedAt);
    }

    /** The reconciler's line's {@value #FIELD}: counts, and ages in whole seconds. */
    public Map<String, Object> toLog(int maxJobsInFlight) {
      Map<String, Object> gauges = new LinkedHashMap<>();
      gauges.put("queued", queued);
      gauges.put("gathered", gathered);
      gauges.put("oldest_queued_seconds", oldestWait().toSeconds());
      gauges.put("jobs_in_flight", jobsInFlight());
      gauges.put("max_jobs_in_flight", maxJobsInFlight);
      gauges.put("jobs_submitted", submitted);
      gauges.put("oldest_job_seconds", oldestJob().toSeconds());
      return gauges;
    }

    private Duration age(Instant since) {
      return since == null || since.isAfter(at) ? Duration.ZERO : Duration.between(since, at);
    }
  }

  Reading read();
}
