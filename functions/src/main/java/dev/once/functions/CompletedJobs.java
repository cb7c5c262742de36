package dev.once.functions;

import dev.once.entry.Report;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import java.util.Optional;

/**
 * Whether a batch job was completed before, from one read of its publish record (the last of its completion's chain).
 * All the webhook needs of the ledger: it reads, never writes, and needs neither Gemini nor the results topic.
 */
final class CompletedJobs {
  private final Once once;

  CompletedJobs(Once once) {
    this.once = once;
  }

  /** The report of a job completed before, or empty when it must still be completed. */
  Optional<Report> earlier(IdempotencyKey jobKey) {
    return once.peek(jobKey, Effects.PUBLISH).map(done -> Report.of(jobKey, Effects.PUBLISH, done));
  }
}
