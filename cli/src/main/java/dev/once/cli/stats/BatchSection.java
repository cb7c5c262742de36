package dev.once.cli.stats;

import dev.once.cli.Context;
import dev.once.cli.Durations;
import dev.once.cli.Reads;
import dev.once.pipeline.BatchGauges;
import dev.once.pipeline.FirestoreBatchGauges;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.PipelineSetting;
import java.io.PrintWriter;

/**
 * Batch mode as it stands, under the outcome table: the reconciler's own gauges ({@link BatchGauges}, read here the
 * same way) — documents queued and gathered, the oldest wait, the jobs in flight by state against the cap — and the
 * jobs done. Nothing when there is none of it (sync mode). Five small reads.
 */
final class BatchSection {
  private BatchSection() {}

  static void print(Context context, PrintWriter out) {
    Context.Target target = context.firestore();
    BatchGauges.Reading now = Reads.call(() -> new FirestoreBatchGauges(target.db()).read(), "the batch gauges");
    long done = Reads.await(target.db().collection(Gatherings.COLLECTION).whereEqualTo("state", Gatherings.DONE)
        .count().get(), "the batch jobs done").getCount();
    if (now.queued() + now.gathered() + now.jobsInFlight() + done == 0) {
      return;
    }
    out.println("  batch mode, now: " + now.queued() + " documents queued"
        + (now.oldestQueuedAt() == null ? "" : " (the oldest waiting " + Durations.span(now.oldestWait()) + ")") + ", "
        + now.gathered() + " gathered into jobs being made");
    out.println("  batch jobs: " + now.jobsInFlight() + " in flight of " + maxJobsInFlight(context)
        + " (BATCH_MAX_JOBS_IN_FLIGHT): " + now.gathering() + " gathering, " + now.sealed()
        + " sealed and not submitted, " + now.submitted() + " submitted"
        + (now.oldestSubmittedAt() == null ? "" : " (the oldest " + Durations.span(now.oldestJob()) + " ago)") + "; "
        + done
        + " done");
  }

  /** The cap the functions are deployed with, if the tool is told (BATCH_MAX_JOBS_IN_FLIGHT), else the default. */
  static String maxJobsInFlight(Context context) {
    return context.env(PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT.name())
        .orElse(PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT.defaultValue());
  }
}
