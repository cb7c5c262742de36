package dev.once.functions.webhook;

import dev.once.entry.Report;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordQueries;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Whether a batch job was completed before, from one read of its publish record (the last of its completion's chain),
 * and whether it is a job of this pipeline. All the webhook reads: it never writes Firestore, and needs neither
 * Gemini nor the results topic.
 */
public final class CompletedJobs {
  /** The webhook's one read: Gemini waits on its answer. */
  private static final Duration LOOKUP_BOUND = Duration.ofSeconds(10);

  private final Once once;
  private final Supplier<RecordQueries> queries;

  public CompletedJobs(Once once, Supplier<RecordQueries> queries) {
    this.once = once;
    this.queries = queries;
  }

  /**
   * Whether a document of this pipeline waits for the job (its analysis names it): what binds a delivery whose
   * signature names no endpoint ({@code v1a}) to this webhook. One read of at most one document, on the equality
   * index the completion's own query uses. A job whose members are not marked yet (it ended within seconds of its
   * submission) is not found: that delivery is ignored, and the reconciler completes the job.
   */
  boolean submittedHere(IdempotencyKey jobKey) {
    return queries.get().anySubmittedTo(GeminiCompletionKeys.jobName(jobKey), LOOKUP_BOUND);
  }

  /** The report of a job completed before, or empty when it must still be completed. */
  Optional<Report> earlier(IdempotencyKey jobKey) {
    return once.peek(jobKey, Effects.PUBLISH).map(done -> Report.of(jobKey, Effects.PUBLISH, done));
  }
}
