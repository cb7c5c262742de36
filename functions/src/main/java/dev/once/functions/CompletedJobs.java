package dev.once.functions;

import com.google.cloud.firestore.Firestore;
import dev.once.entry.Report;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Records;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Whether a batch job was completed before, from one read of its publish record (the last of its completion's chain),
 * and whether it is a job of this pipeline. All the webhook reads: it never writes Firestore, and needs neither
 * Gemini nor the results topic.
 */
final class CompletedJobs {
  private final Once once;
  private final Supplier<Firestore> firestore;

  CompletedJobs(Once once, Supplier<Firestore> firestore) {
    this.once = once;
    this.firestore = firestore;
  }

  /**
   * Whether a document of this pipeline waits for the job (its analysis names it): what binds a delivery whose
   * signature names no endpoint ({@code v1a}) to this webhook. One read of at most one document, on the equality
   * index the completion's own query uses. A job whose members are not marked yet (it ended within seconds of its
   * submission) is not found: that delivery is ignored, and the reconciler completes the job.
   */
  boolean submittedHere(IdempotencyKey jobKey) {
    try {
      return !firestore.get().collection(Records.ANALYSES)
          .whereEqualTo("job", GeminiCompletionKeys.jobName(jobKey)).limit(1).get()
          .get(10, TimeUnit.SECONDS).isEmpty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while looking up " + jobKey.value(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not look up the documents of " + jobKey.value() + ": " + e, e);
    }
  }

  /** The report of a job completed before, or empty when it must still be completed. */
  Optional<Report> earlier(IdempotencyKey jobKey) {
    return once.peek(jobKey, Effects.PUBLISH).map(done -> Report.of(jobKey, Effects.PUBLISH, done));
  }
}
