package dev.once.functions.gathering;

import com.google.genai.types.BatchJob;
import dev.once.functions.gathering.JobRequests.Refused;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiErrors;
import dev.once.gemini.InputTooLarge;
import dev.once.gemini.NotSubmitted;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultMessage;
import dev.once.pipeline.ResultPublication;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A gathering's submission (batch mode): the documents gathered into it read, its membership sealed, and one batch job
 * made of them, paid for at most once.
 *
 * <p>The submission is a paid effect run through {@link Once}, keyed by the gathering's id: one {@code batches.create}
 * whose display name names the gathering, so a retry after a try that may have made the job (an answer late, reset,
 * 5xx, 429) adopts it by that name instead of paying for a second. Its commit records the job on the gathering (the
 * completion goes by the gathering's members), a bounded commit whatever the job's size; each member's analysis is
 * then told its job, conditionally, outside it. Gemini's refusals that rule the job out free the try; the others leave
 * it counted, and the gathering waits (the reconciler retries it, looking first): a document is never failed for want
 * of capacity, and no try counts against a cap, since a retry that looks first cannot pay twice.
 *
 * <p>A refusal of the whole job is the job's, never its members': too large inlined, it is sent from an input file;
 * too large even so, or refused for what a document holds without naming it, its members go back to the queue for
 * jobs of half as many (a document alone in a job refused so is refused itself); only a refusal naming one request
 * refuses that document. Documents run again after a job gave them no answer that could be matched go in a job made
 * from an input file, and a document back in the queue makes a job due at once.
 */
final class JobSubmission {
  /** The key prefix of a gathering's submission in the ledger. */
  static final String KEY_PREFIX = "batch:";

  private final Once once;
  private final Supplier<Gatherings> gatherings;
  private final Supplier<RecordQueries> queries;
  private final Supplier<RecordWrites> records;
  private final Supplier<BatchJobs> batchJobs;
  private final ResultPublication publication;
  private final BatchSubmitter.Limits limits;
  private final JobRequests jobRequests;

  /** @param jobRequests reads each member into its request (or why it is refused) */
  JobSubmission(Once once, Supplier<Gatherings> gatherings, Supplier<RecordQueries> queries,
      Supplier<RecordWrites> records, JobRequests jobRequests, Supplier<BatchJobs> batchJobs,
      ResultPublication publication, BatchSubmitter.Limits limits) {
    this.once = once;
    this.gatherings = gatherings;
    this.queries = queries;
    this.records = records;
    this.batchJobs = batchJobs;
    this.publication = publication;
    this.limits = limits;
    this.jobRequests = jobRequests;
  }

  /**
   * The gathering's submission, at most one paid job whoever runs it and however often. Its opener has assigned its
   * documents before; a resumed one (opened longer ago than a submission's lease) gets none added.
   */
  Outcome submit(String id) {
    List<RecordQueries.Submitted> inJob = new ArrayList<>();
    Outcome outcome = once.run(IdempotencyKey.of(KEY_PREFIX + id), Effects.SUBMIT,
        Policy.DEFAULT.leaseAtLeast(limits.submissionLease()), attempt -> create(attempt, id, inJob));
    if (outcome instanceof Outcome.Processed processed) {
      processed.recorded(Submission.CODEC).flatMap(Submission::job)
          .ifPresent(job -> gatherings.get().markSubmitted(job, inJob));
    }
    return outcome;
  }

  /** @param inJob filled with the documents the job was made for, as read */
  private Completion create(Attempt attempt, String id, List<RecordQueries.Submitted> inJob) throws Refusal {
    List<RecordQueries.Submitted> gathered = queries.get().gatheredIn(id);
    Gatherings.State gathering = seal(id, gathered);
    List<RecordQueries.Submitted> members = gathering == null ? List.of() : sealed(gathering, gathered);
    if (members.isEmpty()) {
      // Its documents went to another job (a concurrent submitter), or its submitter crashed before assigning any.
      return Completion.of(Submission.CODEC, Submission.none(id), Gatherings.done(id));
    }
    List<SideWrites> writes = new ArrayList<>();
    inJob.clear();
    BatchJob job = earlierJob(attempt, id);
    if (job != null) {
      // The adopted job holds every member the earlier try did not refuse (it read them all; one it could not read
      // got no answer, and its completion runs it again). Those it refused were published then: recorded again now.
      for (RecordQueries.Submitted member : members) {
        String refusal = gathering.refused().get(member.documentKey().documentId());
        if (refusal == null) {
          inJob.add(member);
        } else {
          writes.add(records.get().rejected(member.documentKey(), member.source(), "refused before its batch job was"
              + " made: " + refusal).and(member.reservation().release()));
        }
      }
    } else {
      job = createJob(attempt, id, members, inJob, writes);
      if (job == null) {
        return Completion.of(Submission.CODEC, Submission.none(id), SideWrites.all(writes).and(Gatherings.done(id)));
      }
    }
    String name = job.name().orElseThrow(() -> new IllegalStateException("Gemini created a batch job without a name"));
    writes.add(Gatherings.submitted(id, name, inJob.size()));
    return Completion.of(Submission.CODEC, new Submission(id, Optional.of(name), inJob.size()), SideWrites.all(writes));
  }

  /**
   * Reads the members, refuses those that are gone, too large or empty (published, then recorded on the gathering
   * before anything is asked of Gemini), and makes the job of the others; fills {@code inJob} with them. Null when no
   * job was made and none is to be: no member left, or Gemini refused the job for its size, which puts its members
   * back in the queue for smaller jobs ({@code writes} say so). Throws what may have made a job, to count the try.
   */
  private BatchJob createJob(Attempt attempt, String id, List<RecordQueries.Submitted> members,
      List<RecordQueries.Submitted> inJob, List<SideWrites> writes) throws Refusal {
    List<BatchJobs.Request> requests = new ArrayList<>();
    Map<String, String> refused = new LinkedHashMap<>();
    for (RecordQueries.Submitted member : members) {
      Refused refusal = jobRequests.read(id, member, requests);
      if (refusal != null) {
        refuse(member, refusal, refused, writes);
      } else if (jobRequests.reserved(member, requests.get(requests.size() - 1), writes)) {
        inJob.add(member);
      } else {
        requests.remove(requests.size() - 1); // it waits in the queue for the day's budget, as it waited to be queued
      }
    }
    // Documents run again go in an input file: its lines' keys came back more dependably than inlined metadata.
    BatchJobs.Input how = inJob.stream().anyMatch(RecordQueries.Submitted::rerun) ? BatchJobs.Input.FILE
        : BatchJobs.Input.INLINED_WHEN_SMALL;
    while (!requests.isEmpty()) {
      recordRefusals(id, refused);
      attempt.ensureLease(limits.timeout());
      RuntimeException lastRefusal;
      try {
        // The lease is made to outlast batches.create itself, after an input file's upload.
        return batchJobs.get().submit(id, requests, how, file -> {
          attempt.ensureLease(limits.timeout());
          file.ifPresent(name -> recordInput(id, name));
        });
      } catch (InputTooLarge e) {
        lastRefusal = e; // nothing uploaded, nothing asked: fewer documents a job, as for a job refused for its size
      } catch (RuntimeException e) {
        throwUnlessRefusedHere(id, e);
        lastRefusal = e;
      }
      // Refused outright (nothing was made): by what Gemini said, one document's fault, or the job's size.
      OptionalInt named = GeminiErrors.refusedRequest(lastRefusal);
      if (named.isPresent() && named.getAsInt() < requests.size()) {
        RecordQueries.Submitted member = inJob.remove(named.getAsInt());
        requests.remove(named.getAsInt());
        refuse(member, new Refused(GeminiErrors.describe(lastRefusal), Refused.BY_GEMINI), refused, writes);
      } else if (GeminiErrors.tooLarge(lastRefusal) && how != BatchJobs.Input.FILE) {
        how = BatchJobs.Input.FILE; // over the inline limit after all: the same requests from a file
      } else if (inJob.size() > 1) {
        // Too large, or refused for what one of them holds without saying which: smaller jobs, until one is alone.
        int bound = (inJob.size() + 1) / 2;
        for (RecordQueries.Submitted member : inJob) {
          writes.add(records.get().requeued(member,
              "Gemini refused a job of " + inJob.size() + " documents holding it ("
                  + GeminiErrors.describe(lastRefusal) + "): it goes into a job of at most " + bound,
              member.reruns(), bound));
        }
        inJob.clear();
        return null;
      } else {
        // Alone in its job: its own fault.
        refuse(inJob.remove(0), new Refused(GeminiErrors.describe(lastRefusal), Refused.BY_GEMINI), refused, writes);
        requests.clear();
      }
    }
    return null;
  }

  /**
   * Returns when batches.create refused the job outright (nothing was made) for its size or for what a document holds
   * (the caller makes smaller jobs, or refuses that document), after logging Google's message. Throws anything else:
   * another outright refusal (a configuration problem, say) as not performed, to be tried later; what may have made
   * the job as it is, to count the try (the next one looks for the job first).
   */
  private void throwUnlessRefusedHere(String id, RuntimeException e) {
    if (e instanceof NotSubmitted) {
      throw Refusal.notPerformed(e.getMessage(), e); // its input was not stored: no job asked for, none made
    }
    if (!GeminiErrors.certainlyNotCreated(e) && !GeminiErrors.tooLarge(e)) {
      throw e;
    }
    String reason = GeminiErrors.describe(e);
    once.log().write("WARNING", "batches.create refused the whole job", Map.of("gathering", id, "error", reason));
    if (!GeminiErrors.refusedRequest(e).isPresent() && !GeminiErrors.tooLarge(e) && !GeminiErrors.isPermanent(e)) {
      throw Refusal.notPerformed(reason, e);
    }
  }

  /**
   * A member refused before its job was made: published now, recorded in the submission's commit. The gathering keeps
   * the kind of it in a word or two: 5,000 members' ids and words stay well inside a document's 1 MiB, whatever Google's
   * message says; the message itself goes to the member's analysis, bounded, and to its result.
   */
  private void refuse(RecordQueries.Submitted member, Refused why, Map<String, String> refused,
      List<SideWrites> writes) {
    publishRefusal(member, why.reason());
    refused.put(member.documentKey().documentId(), why.kind());
    writes.add(records.get().rejected(member.documentKey(), member.source(), why.reason())
        .and(member.reservation().release()));
  }

  /** Records the input file on the gathering before batches.create (nothing asked of Gemini yet when it fails). */
  private void recordInput(String id, String fileName) {
    try {
      gatherings.get().recordInput(id, fileName);
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not record the input file of the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /** Records the refusals on the gathering before batches.create, for a try that adopts the job to go by. */
  private void recordRefusals(String id, Map<String, String> refused) {
    if (refused.isEmpty()) {
      return;
    }
    try {
      gatherings.get().refuse(id, refused);
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not record the refusals of the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /**
   * Seals the gathering with the documents gathered into it, unless an earlier try did; returns it as sealed (null
   * when none is gathered and it was never sealed).
   */
  private Gatherings.State seal(String id, List<RecordQueries.Submitted> gathered) {
    if (gathered.isEmpty()) {
      return null;
    }
    try {
      return gatherings.get().seal(id, gathered.stream().map(member -> member.documentKey().documentId()).toList());
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not seal the gathering " + id + ": " + e.getMessage(), e);
    }
  }

  /**
   * The gathered documents that are the job's: those the gathering was sealed with, by this try or an earlier one
   * (which may have made the job with them). A document gathered after the seal is not among them.
   */
  private static List<RecordQueries.Submitted> sealed(Gatherings.State gathering,
      List<RecordQueries.Submitted> gathered) {
    Set<String> members = Set.copyOf(gathering.members());
    return gathered.stream().filter(member -> members.contains(member.documentKey().documentId())).toList();
  }

  /** The job an earlier try may have made (null: none may have, or none was), found by its display name. */
  private BatchJob earlierJob(Attempt attempt, String id) {
    if (attempt.earlierTriesThatMayHaveRun() == 0) {
      return null;
    }
    try {
      BatchJob found = batchJobs.get().findGathered(id).orElse(null);
      if (found != null) {
        once.log().info("adopted the batch job an earlier try made", Map.of("gathering", id,
            "job", found.name().orElse("?"), "attempt", attempt.number()));
      }
      return found;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not look for the batch job an earlier try may have made: "
          + GeminiErrors.describe(e), e);
    }
  }

  /**
   * Publishes a member's refusal before the commit that records it: once that commit lands nothing runs this
   * submission again, so a refusal published after it would be lost with a crash in between. Published first, a
   * crash only repeats it, which its own publish claim absorbs (the refusal is final: the generation is gone, too
   * large, or refused by Gemini). Not published now, the submission is not performed and is tried again.
   */
  private void publishRefusal(RecordQueries.Submitted member, String reason) {
    Outcome published = publication.publish(member.documentKey(),
        ResultMessage.rejected(member.documentKey(), member.source(), reason));
    if (!(published instanceof Outcome.Processed) && !(published instanceof Outcome.Duplicate)) {
      throw Refusal.notPerformed("could not publish the refusal of " + member.documentKey().value() + " yet: "
          + published.getClass().getSimpleName(), null);
    }
  }
}
