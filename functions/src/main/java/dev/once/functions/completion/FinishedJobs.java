package dev.once.functions.completion;

import com.google.genai.types.BatchJob;
import com.google.genai.types.JobState;
import dev.once.gemini.AnswersGone;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.JobNames;
import dev.once.gemini.JobStates;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.observe.Log;
import dev.once.pipeline.Gatherings;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What a batch job that ended left, read as Google's services really answer: a 404 believed only when the listing
 * agrees for an hour, a succeeded job whose output is not there yet, a failure for what the requests hold told from
 * an outage's, and answers whose responses file is gone.
 */
final class FinishedJobs {
  /** How long a gathered job Gemini says it does not have is looked for before its documents run again. */
  static final Duration NOT_FOUND_GRACE = Duration.ofHours(1);
  /**
   * Past this after a job ended, answers that cannot be read are taken to be gone (the Files API keeps a responses
   * file 48 hours): its documents run again rather than the job being retried for ever.
   */
  static final Duration ANSWERS_KEPT = Duration.ofHours(47);
  /** How long a job reported succeeded without an output is waited for (see {@link #answersNotThereYet}). */
  static final Duration ANSWERS_GRACE = Duration.ofHours(1);

  /** A job's answers filed to its members, or why there are none to file (its responses file is gone). */
  record Answers(BatchAnswers filed, String lost) {}

  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<Gatherings> gatherings;
  private final InstantSource clock;
  private final Log log;

  FinishedJobs(Supplier<BatchJobs> batchJobs, Supplier<Gatherings> gatherings, InstantSource clock, Log log) {
    this.batchJobs = batchJobs;
    this.gatherings = gatherings;
    this.clock = clock;
    this.log = log;
  }

  /**
   * A gathered job Gemini answered it has no such job for (batches.get 404). A listing that holds it settles it (a
   * 404 from a front end behind, say); otherwise its first such answer is recorded on the gathering, and the job is
   * given up on (its documents run again) only an hour after that — one bogus 404 must not send every document of a
   * job that exists into another, billing them twice.
   */
  Optional<BatchJob> notFoundYet(String name, JobMembers members) throws Refusal {
    Optional<BatchJob> listed = batchJobs.get().findGathered(members.gathering())
        .filter(job -> name.equals(job.name().orElse(null)));
    if (listed.isPresent()) {
      return listed;
    }
    Instant firstSaid = gatherings.get().state(members.gathering()).notFoundAt();
    if (firstSaid == null) {
      throw new CompletionFlow.NotFinished("Gemini says it has no batch job " + name + ": looked for again later",
          Gatherings.notFound(members.gathering()));
    }
    if (firstSaid.isAfter(clock.instant().minus(NOT_FOUND_GRACE))) {
      throw new CompletionFlow.NotFinished("Gemini has said it has no batch job " + name + " since " + firstSaid
          + ": believed after " + NOT_FOUND_GRACE.toMinutes() + " minutes");
    }
    return Optional.empty();
  }

  /**
   * A job reported succeeded whose output is not there yet: users report {@code BATCH_STATE_SUCCEEDED} before the
   * responses file can be read (tidyverse/ellmer#926 keeps polling for it). Taken for no answers at all, it would send
   * every document into another job, paid twice; so for an hour after it ended it is not finished yet, and then it is
   * what it looks like.
   */
  boolean answersNotThereYet(BatchJob job) {
    return JobStates.succeeded(job) && job.dest().isEmpty() && endOf(job).isAfter(clock.instant().minus(ANSWERS_GRACE));
  }

  /**
   * A job that ended FAILED for what its requests hold: its error (a google.rpc status) is not an outage's (an internal
   * error, an overload, a quota, a deadline), or it gives none.
   */
  boolean failedForItsRequests(BatchJob job) {
    return JobStates.state(job).filter(s -> s == JobState.Known.JOB_STATE_FAILED).isPresent()
        && batchJobs.get().failure(job).map(error -> !error.transientFailure()).orElse(true);
  }

  /** The job's answers filed to its members (none from a job Gemini no longer has). */
  Answers answers(String name, Optional<BatchJob> found, JobMembers members) {
    List<BatchResult> results = List.of();
    String lost = null;
    if (found.isPresent()) {
      try {
        results = batchJobs.get().results(found.get());
      } catch (AnswersGone e) {
        lost = e.getMessage();
      } catch (RuntimeException e) {
        if (endOf(found.get()).isAfter(clock.instant().minus(ANSWERS_KEPT))) {
          throw e; // retried: the file can still be read
        }
        lost = "its answers could not be read " + ANSWERS_KEPT.toHours() + " hours after it ended: " + e;
      }
    }
    if (lost != null) {
      // Google billed those answers, and they are lost: the documents run again, and the operator must know.
      log.error("the answers of a batch job could not be read; its documents run again", Map.of("job", name,
          "reason", lost));
    }
    BatchAnswers filed = BatchAnswers.of(results, members.ids(), members.rules(),
        id -> JobNames.reference(members.gathering(), id), FinishedJobs::documentId);
    return new Answers(filed, lost == null ? null : "the batch job " + name + " ended, but " + lost);
  }

  private static Instant endOf(BatchJob job) {
    return job.endTime().or(job::updateTime).orElse(Instant.EPOCH);
  }

  /** The document id of a key an answer came back under; null when it is no key at all. */
  private static String documentId(String key) {
    try {
      return IdempotencyKey.of(key).documentId();
    } catch (RuntimeException e) {
      return null;
    }
  }
}
