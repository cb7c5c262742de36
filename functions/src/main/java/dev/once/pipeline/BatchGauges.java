package dev.once.pipeline;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Batch mode as it stands now, in four small reads: the documents queued and gathered (two counts, a read per
 * thousand), the oldest queued one, and the gatherings in flight — at most {@code BATCH_MAX_JOBS_IN_FLIGHT}, read
 * without their members — by state. The reconciler logs it once a run as one line ({@value #MESSAGE}, its
 * {@value #FIELD} in seconds and counts), which terraform/observability.tf turns into the metrics of the dashboard's
 * batch panels and of the alerts on the oldest wait and the oldest job; {@code once stats} prints it.
 */
public final class BatchGauges {
  /** The message of the reconciler's line. */
  public static final String MESSAGE = "batch gauges";
  /** The line's field holding the gauges. */
  public static final String FIELD = "gauges";
  /** More than the cap allows (100), so racing openers that back off are counted too. */
  private static final int IN_FLIGHT_READ = 500;

  private final Firestore db;

  public BatchGauges(Firestore db) {
    this.db = db;
  }

  /**
   * What was read, at {@code at} (Firestore's time, so ages are judged by its clock). The gatherings in flight are
   * {@code gathering} (open, their members not sealed yet), {@code sealed} (sealed, their job not made yet) and
   * {@code submitted} (their job made, not completed); the oldest dates are null when there is none.
   */
  public record Reading(Instant at, long queued, long gathered, Instant oldestQueuedAt, long gathering, long sealed,
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

  public Reading read() {
    long queued = count(DocumentStatus.QUEUED);
    long gathered = count(DocumentStatus.GATHERED);
    QuerySnapshot oldest = RecordQueries.await(db.collection(Records.ANALYSES)
        .whereEqualTo("status", DocumentStatus.QUEUED.value()).orderBy("queuedAt").limit(1).get(),
        "the oldest queued document");
    Instant oldestQueuedAt = oldest.isEmpty() ? null : instant(oldest.getDocuments().get(0).getTimestamp("queuedAt"));
    QuerySnapshot inFlight = RecordQueries.await(db.collection(Gatherings.COLLECTION).whereEqualTo("inFlight", true)
        .select("state", "sealedAt", "submittedAt").limit(IN_FLIGHT_READ).get(), "the gatherings in flight");
    long gathering = 0;
    long sealed = 0;
    long submitted = 0;
    Instant oldestSubmittedAt = null;
    for (QueryDocumentSnapshot g : inFlight) {
      if (Gatherings.SUBMITTED.equals(g.getString("state"))) {
        submitted++;
        Instant at = instant(g.getTimestamp("submittedAt"));
        oldestSubmittedAt = at != null && (oldestSubmittedAt == null || at.isBefore(oldestSubmittedAt)) ? at
            : oldestSubmittedAt;
      } else if (g.get("sealedAt") != null) {
        sealed++;
      } else {
        gathering++;
      }
    }
    return new Reading(instant(inFlight.getReadTime()), queued, gathered, oldestQueuedAt, gathering, sealed,
        submitted, oldestSubmittedAt);
  }

  private long count(DocumentStatus status) {
    return RecordQueries.await(db.collection(Records.ANALYSES).whereEqualTo("status", status.value()).count().get(),
        "the " + status.value() + " documents").getCount();
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }
}
