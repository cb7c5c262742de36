package dev.once.functions.completion;

import com.google.genai.types.BatchJob;
import dev.once.config.Lazy;
import dev.once.entry.Report;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.JobStates;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Held;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import dev.once.pipeline.EventCounts;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultMessage;
import dev.once.pipeline.ResultPublication;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A batch job finished — told by the webhook or found by the reconciler, often both. Once per job: confirm its
 * terminal state with batches.get, fetch its answers, and complete its documents in chunks of {@link #CHUNK}: each
 * chunk one commit through {@link Once} (keyed by the job's key and the chunk's number: its documents' analyses, bills
 * and settled reservations), then that chunk's publishes, once. Only after the last chunk does the commit that
 * completes the job's claim mark its gathering done (no longer in flight). A crash anywhere resumes where it stopped:
 * a chunk done before costs one read, and its publishes are not repeated once recorded. The pre-check reads the job's
 * publish record: a job completed before costs one read.
 *
 * <p>Each answer goes to the document it was generated for, by proof, never by position ({@link BatchAnswers}). A
 * document whose answer cannot be given to it safely, or whose job failed, expired or was cancelled before answering
 * it, goes back to the queue for another job (keeping its place and its reservation), until it has been in
 * {@code maxAttempts} jobs: then it is given up, failed and published as such. Only a request Gemini itself refused
 * (its own error) fails its document at once. Each answered document's reservation of the day's budget is settled to
 * its bill in its chunk's commit; what the answers that went to no document used is recorded against the job (first
 * chunk), since Google bills those too.
 *
 * <p>This class runs the steps; each concern is its own: whose job it is ({@link JobMembers}, with {@link StrayJobs}
 * for a job no document waits for), what the job left ({@link FinishedJobs}), what each document gets
 * ({@link DocumentFate}), what a chunk did ({@link ChunkResult}, added up in {@link CompletionTotals}) and what the
 * answers given to no document cost ({@link UnattributedCost}).
 */
public final class CompletionFlow {
  /** The job is not finished yet (the webhook came early, or the listing was stale): retry later. */
  public static final class NotFinished extends Refusal {
    private static final long serialVersionUID = 1L;

    NotFinished(String message) {
      this(message, SideWrites.NONE);
    }

    /** Not finished, committing {@code writes} with the release (what it learned meanwhile). */
    NotFinished(String message, SideWrites writes) {
      super(Kind.NOT_PERFORMED, message, null, writes);
    }
  }

  /** A JVM system property only tests pass: documents per chunk ({@link #CHUNK}), from 1 to 100. */
  static final String CHUNK_PROPERTY = "once.completion.chunk";
  /**
   * Documents per chunk of a completion: one commit writes each one's analysis (the invoice is at most
   * InvoicePrompt.MAX_OUTPUT_TOKENS, ~32 KB of JSON), bill and settled reservation, ~3.5 MB at worst: under Firestore's
   * 10 MiB per request and the emulator's 4 MiB. The chunk's ledger record keeps its published summaries (~0.5 KB each).
   * A test may make chunks smaller ({@link #CHUNK_PROPERTY}), to show a job completed in many chunks with a tenth of
   * the documents; never larger.
   */
  static final int CHUNK = chunkSize(Integer.getInteger(CHUNK_PROPERTY));

  static int chunkSize(Integer asked) {
    return asked == null ? 100 : Math.max(1, Math.min(100, asked));
  }

  /** What a chunk's key adds to the job's: {@code gemini:batches/ID#chunk-N}. */
  static final String CHUNK_SUFFIX = "#chunk-";

  private final Once once;
  private final Supplier<BatchJobs> batchJobs;
  private final ResultPublication publication;
  private final JobMembers.Reader membership;
  private final FinishedJobs finished;
  private final DocumentFate fate;
  private final UnattributedCost unattributed;

  /** @param maxAttempts the most jobs a document is run in before it is given up ({@code ONCE_MAX_ATTEMPTS}) */
  public CompletionFlow(Once once, Supplier<BatchJobs> batchJobs, Supplier<RecordWrites> records,
      Supplier<RecordQueries> queries,
      Supplier<Gatherings> gatherings, ResultPublication publication, int maxAttempts, InstantSource clock) {
    this.once = once;
    this.batchJobs = batchJobs;
    this.publication = publication;
    this.membership = new JobMembers.Reader(queries, gatherings, new StrayJobs(batchJobs, queries, gatherings,
        once.log()));
    this.finished = new FinishedJobs(batchJobs, gatherings, clock, once.log());
    this.fate = new DocumentFate(records, maxAttempts);
    this.unattributed = new UnattributedCost(records, once.log());
  }

  /** The report of a job completed before, from one read, or empty when it must still be completed. */
  Optional<Report> alreadyCompleted(IdempotencyKey jobKey) {
    return once.peek(jobKey, Effects.PUBLISH).map(done -> Report.of(jobKey, Effects.PUBLISH, done));
  }

  /** The job's completion record as it stands (one read): whether it was begun, and is held now. */
  public Optional<LedgerRecord> record(IdempotencyKey jobKey) {
    return once.record(jobKey, Effects.COMPLETE);
  }

  public Report complete(IdempotencyKey jobKey) {
    return complete(jobKey, () -> batchJobs.get().find(GeminiCompletionKeys.jobName(jobKey)));
  }

  /** @param found the job as a batches.get just answered (empty: Gemini has none by that name) */
  public Report complete(IdempotencyKey jobKey, Optional<BatchJob> found) {
    return complete(jobKey, () -> found);
  }

  /** @param job the job, looked up once the completion is claimed (or as it was just looked up) */
  private Report complete(IdempotencyKey jobKey, Supplier<Optional<BatchJob>> job) {
    Optional<Report> earlier = alreadyCompleted(jobKey);
    if (earlier.isPresent()) {
      return earlier.get();
    }
    Outcome completed = once.run(jobKey, Effects.COMPLETE, Policy.DEFAULT.then(Effects.PUBLISH),
        attempt -> completion(attempt, jobKey, job));
    Report report = Report.of(jobKey, Effects.COMPLETE, completed);
    boolean settled = completed instanceof Outcome.Processed || completed instanceof Outcome.Duplicate
        || completed instanceof Outcome.Rejected; // not a job of this pipeline: nothing to publish, but say so once
    if (completed instanceof Outcome.Processed processed) {
      JobCompletion done = processed.recorded(JobCompletion.CODEC).orElseThrow();
      for (Map.Entry<String, Object> detail : done.details().entrySet()) {
        report = report.with(detail.getKey(), detail.getValue());
      }
      report = EventCounts.finished(report, done.documents(), done.givenUp());
    }
    Optional<Held> held = completed instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    // Every chunk published its own documents: the job's publish record only says so, for the one-read pre-check.
    return settled ? report.then(Effects.PUBLISH, publication.publishAll(jobKey, List.of(), held)) : report;
  }

  private Completion completion(Attempt attempt, IdempotencyKey jobKey, Supplier<Optional<BatchJob>> lookUp)
      throws Refusal {
    if (attempt.number() > 1) {
      leftToAnotherHolder(jobKey); // before batches.get, which for an inlined job carries every answer
    }
    String name = GeminiCompletionKeys.jobName(jobKey);
    Optional<BatchJob> found = lookUp.get();
    if (found.isPresent() && !JobStates.isTerminal(found.get())) {
      throw new NotFinished(name + " is " + JobStates.state(found.get()).map(Enum::name).orElse("in an unknown state"));
    }
    // Whose job it is is decided before anything is downloaded: a foreign job in the same Gemini project, with a
    // large responses file, must cost one query, not an instance's memory on every reconciler run.
    JobMembers members = membership.of(name, found);
    if (found.isEmpty() && members.gathering() != null) {
      found = finished.notFoundYet(name, members);
    }
    if (found.isPresent() && finished.answersNotThereYet(found.get())) {
      throw new NotFinished(name + " succeeded, but its answers are not there yet");
    }
    String state = found.map(job -> JobStates.state(job).map(Enum::name).orElse("UNKNOWN")).orElse("NOT_FOUND");
    // Deleted, or gone past Gemini's own retention: its documents get no answer from it, and go into another job.
    String ended = found.isEmpty() ? "Gemini has no batch job " + name
        : JobStates.succeeded(found.get()) ? null : "the batch job " + name + " ended " + state;
    // Failed as a whole for what its requests hold (not an outage): one poison document must not use up its
    // innocent companions' tries, so they go into jobs of half as many, uncounted, until it is alone.
    int halved = found.filter(job -> finished.failedForItsRequests(job) && members.size() > 1)
        .map(job -> (members.size() + 1) / 2).orElse(0);
    // Downloaded only for a chunk still to complete: a completion resumed after its last chunk downloads nothing. A
    // job that failed, expired or was cancelled may still have answered some of its requests: those are used.
    Optional<BatchJob> ending = found;
    Supplier<FinishedJobs.Answers> answers = Lazy.of(() -> finished.answers(name, ending, members));
    CompletionTotals totals = new CompletionTotals();
    int chunks = (members.size() + CHUNK - 1) / CHUNK;
    for (int chunk = 0; chunk < chunks; chunk++) {
      totals.add(completeChunk(jobKey, chunk, members, answers, ended, halved));
    }
    if (members.inputFile() != null) {
      batchJobs.get().deleteInput(members.inputFile()); // every chunk is done: the job's input file is read no more
    }
    // The gathering the job was made for is no longer in flight: its place goes to the next job.
    return Completion.of(JobCompletion.CODEC, totals.completion(name, state, chunks),
        members.gathering() == null ? SideWrites.NONE : Gatherings.done(members.gathering()));
  }

  /**
   * A completion taken over from a holder that stopped: if a chunk it began is still held (its lease outlives the
   * job's, taken later), the completion is left to it, before anything is asked of Gemini. Reads the chunks' records
   * in order, up to the first not done.
   */
  private void leftToAnotherHolder(IdempotencyKey jobKey) throws Refusal {
    for (int chunk = 0;; chunk++) {
      IdempotencyKey chunkKey = chunkKey(jobKey, chunk);
      for (String effect : List.of(Effects.COMPLETE, Effects.PUBLISH)) {
        Optional<LedgerRecord> record = once.record(chunkKey, effect);
        if (record.isEmpty()) {
          return;
        }
        if (record.get().state() != RecordState.DONE) {
          if (record.get().leaseLive()) {
            throw Refusal.notPerformed("chunk " + chunk + " of " + jobKey.value() + " is held by another process",
                null);
          }
          return;
        }
      }
    }
  }

  private static IdempotencyKey chunkKey(IdempotencyKey jobKey, int chunk) {
    return IdempotencyKey.of(jobKey.value() + CHUNK_SUFFIX + chunk);
  }

  /**
   * Chunk {@code chunk} of the job's documents: one guarded commit (their analyses, bills, settled reservations, those
   * sent back to the queue; the first chunk also records what the answers given to no document used), then their
   * publishes, guarded by the same key. Returns the chunk's record (its summaries, counts, what they cost). Not
   * finished here (held by another holder, or its publishes not done) is retried with the whole completion.
   */
  private ChunkResult completeChunk(IdempotencyKey jobKey, int chunk, JobMembers members,
      Supplier<FinishedJobs.Answers> answers, String ended, int halved) {
    IdempotencyKey chunkKey = chunkKey(jobKey, chunk);
    Outcome done = once.run(chunkKey, Effects.COMPLETE, Policy.DEFAULT.then(Effects.PUBLISH), attempt -> {
      List<RecordQueries.Submitted> documents = membership.chunk(members, chunk, CHUNK);
      FinishedJobs.Answers job = answers.get();
      String why = ended != null ? ended : job.lost();
      List<DocumentResult> results = new ArrayList<>();
      for (RecordQueries.Submitted document : documents) {
        results.add(fate.of(members.name(), document, job.filed(), why, halved));
      }
      UnattributedCost.ChunkCommit commit = new UnattributedCost.ChunkCommit(ChunkResult.of(results),
          SideWrites.all(results.stream().map(DocumentResult::writes).toList()));
      if (chunk == 0) {
        commit = unattributed.addTo(commit, members, documents, job.filed());
      }
      return Completion.of(ChunkResult.CODEC, commit.result(), commit.writes());
    });
    ChunkResult result = done.recorded(ChunkResult.CODEC).orElseThrow(() -> Refusal.notPerformed("chunk " + chunk
        + " of " + members.name() + " is not completed yet: " + done.getClass().getSimpleName(), null));
    Optional<Held> held = done instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    // A run an operator asked for goes through its document's own publish effect, whose record the invalidation moved:
    // published under KEY/rerun-N, so the receiver sees a new result, and that record finished.
    for (ResultMessage rerun : result.summaries().stream().filter(summary -> summary.run() > 1).toList()) {
      Outcome own = publication.publish(rerun.key(), rerun);
      if (!(own instanceof Outcome.Processed) && !(own instanceof Outcome.Duplicate)) {
        throw Refusal.notPerformed("a re-run's result of chunk " + chunk + " of " + members.name()
            + " is not published yet: " + own.getClass().getSimpleName(), null);
      }
    }
    Outcome published = publication.publishAll(chunkKey, result.summaries().stream()
        .filter(summary -> summary.run() == 1).toList(), held);
    if (!(published instanceof Outcome.Processed) && !(published instanceof Outcome.Duplicate)) {
      throw Refusal.notPerformed("chunk " + chunk + " of " + members.name() + " is not published yet: "
          + published.getClass().getSimpleName(), null);
    }
    return result;
  }

}
