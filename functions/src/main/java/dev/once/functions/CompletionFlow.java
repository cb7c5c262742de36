package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Completion;
import dev.once.guard.Refusal;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.internal.ledger.Claim;
import dev.once.internal.ledger.LedgerRecord;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.Records;
import dev.once.pipeline.ResultMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A batch job finished — told by the webhook or found by the reconciler, often both. Once per job: confirm its
 * terminal state with batches.get, fetch its answers, and write every document's analysis and bill in the
 * commit that completes the claim; then publish each document's result, once per job. A job that failed or
 * expired is recorded and published as such. The pre-check reads the job's publish record: a job completed
 * before costs one read. Each document's reservation of the day's budget, recorded at submission, is settled to its
 * bill in the same commit (released when the job gave it no answer, which Gemini does not bill).
 */
final class CompletionFlow {
  /** The job is not finished yet (the webhook came early, or the listing was stale): retry later. */
  static final class NotFinished extends Refusal {
    private static final long serialVersionUID = 1L;

    NotFinished(String message) {
      super(Kind.NOT_PERFORMED, message, null, SideWrites.NONE);
    }
  }

  private final Once once;
  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<Records> records;
  private final Supplier<RecordQueries> queries;
  private final Supplier<Gatherings> gatherings;
  private final ResultPublication publication;

  CompletionFlow(Once once, Supplier<BatchJobs> batchJobs, Supplier<Records> records, Supplier<RecordQueries> queries,
      Supplier<Gatherings> gatherings, ResultPublication publication) {
    this.once = once;
    this.gatherings = gatherings;
    this.batchJobs = batchJobs;
    this.records = records;
    this.queries = queries;
    this.publication = publication;
  }

  /** The report of a job completed before, from one read, or empty when it must still be completed. */
  Optional<Report> alreadyCompleted(IdempotencyKey jobKey) {
    return once.peek(jobKey, Effects.PUBLISH).map(done -> Report.of(jobKey, Effects.PUBLISH, done));
  }

  /** The job's completion record as it stands (one read): whether it was begun, and is held now. */
  Optional<LedgerRecord> record(IdempotencyKey jobKey) {
    return once.record(jobKey, Effects.COMPLETE);
  }

  Report complete(IdempotencyKey jobKey) {
    return complete(jobKey, () -> batchJobs.get().find(GeminiCompletionKeys.jobName(jobKey)));
  }

  /** @param found the job as a batches.get just answered (empty: Gemini has none by that name) */
  Report complete(IdempotencyKey jobKey, Optional<BatchJob> found) {
    return complete(jobKey, () -> found);
  }

  /** @param job the job, looked up once the completion is claimed (or as it was just looked up) */
  private Report complete(IdempotencyKey jobKey, Supplier<Optional<BatchJob>> job) {
    Optional<Report> earlier = alreadyCompleted(jobKey);
    if (earlier.isPresent()) {
      return earlier.get();
    }
    Outcome completed = once.run(jobKey, Effects.COMPLETE, Policy.DEFAULT.then(Effects.PUBLISH),
        attempt -> completion(jobKey, job.get()));
    Report report = Report.of(jobKey, Effects.COMPLETE, completed);
    List<Map<String, Object>> summaries = switch (completed) {
      case Outcome.Processed processed -> documents(processed.result());
      case Outcome.Duplicate duplicate -> documents(duplicate.result());
      case Outcome.Rejected rejected -> List.of(); // not a job of this pipeline: nothing to publish, but say so once
      case Outcome.InFlight inFlight -> null;
      case Outcome.Conflict conflict -> null;
      case Outcome.Deferred deferred -> null;
    };
    if (completed instanceof Outcome.Processed processed && processed.result().get("costMicroUsd") != null) {
      report = report.with("costMicroUsd", processed.result().get("costMicroUsd"))
          .with("model", String.valueOf(processed.result().get("model")));
    }
    Optional<Claim> held = completed instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    return summaries == null ? report : report.then(Effects.PUBLISH, publication.publishAll(jobKey, summaries, held));
  }

  private Completion completion(IdempotencyKey jobKey, Optional<BatchJob> found) throws Refusal {
    String name = GeminiCompletionKeys.jobName(jobKey);
    if (found.isPresent() && !BatchJobs.isTerminal(found.get())) {
      throw new NotFinished(name + " is " + BatchJobs.state(found.get()).map(Enum::name).orElse("in an unknown state"));
    }
    // Whose job it is is decided before anything is downloaded: a foreign job in the same Gemini project, with a
    // large responses file, must cost one query, not an instance's memory on every reconciler run.
    List<RecordQueries.Submitted> submitted = queries.get().submittedTo(name);
    if (submitted.isEmpty()) {
      throw noDocumentWaits(name, found);
    }
    List<DocumentResult> results;
    String state;
    if (found.isEmpty()) {
      // Deleted, or gone past Gemini's own retention: its documents will get no answer; they fail, and say why.
      results = failed(name, submitted, "Gemini has no batch job " + name);
      state = "NOT_FOUND";
    } else {
      BatchJob job = found.get();
      state = BatchJobs.state(job).map(Enum::name).orElse("UNKNOWN");
      results = BatchJobs.succeeded(job)
          ? answered(job, submitted)
          : failed(name, submitted, "the batch job ended " + state
              + job.error().flatMap(e -> e.message()).map(m -> ": " + m).orElse(""));
    }
    List<Map<String, Object>> summaries = new ArrayList<>();
    List<SideWrites> writes = new ArrayList<>();
    long cost = 0;
    String model = null;
    for (DocumentResult result : results) {
      summaries.add(result.summary());
      writes.add(result.writes());
      cost += result.costMicroUsd();
      model = result.model() == null ? model : result.model();
    }
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("job", name);
    outcome.put("state", state);
    outcome.put("documents", summaries);
    if (model != null) {
      outcome.put("costMicroUsd", cost);
      outcome.put("model", model);
    }
    found.ifPresent(batchJobs.get()::deleteInput); // the job ended: its input file is read no more
    // The gathering the job was made for is no longer in flight: its place goes to the next job.
    submitted.stream().map(RecordQueries.Submitted::gathering).filter(java.util.Objects::nonNull).distinct()
        .forEach(gathering -> writes.add(Gatherings.done(gathering)));
    return Completion.of(outcome, SideWrites.all(writes));
  }

  /** One document's share of a completion: its result, its writes, and what its answer cost (0 without one). */
  private record DocumentResult(Map<String, Object> summary, SideWrites writes, long costMicroUsd, String model) {
    static DocumentResult unanswered(Map<String, Object> summary, SideWrites writes) {
      return new DocumentResult(summary, writes, 0, null);
    }
  }

  /**
   * Why a job no document waits for is not completed. Another application's job (no display name of ours) is refused
   * for good. One of ours is either early — the submission that made it has not committed yet, or a retried try will
   * adopt it (its document has no analysis yet, or is deferred) — and is retried later; or a stray second job (its
   * document's analysis names another job, or is finished), which is refused, never billed or published, and
   * cancelled if it still runs.
   */
  private RuntimeException noDocumentWaits(String name, Optional<BatchJob> found) throws Refusal {
    Optional<String> gathering = found.flatMap(BatchJobs::gatheringId);
    if (gathering.isPresent()) {
      return noDocumentWaitsFor(gathering.get(), name, found.get());
    }
    Optional<String> documentId = found.flatMap(BatchJobs::documentId);
    if (documentId.isEmpty()) {
      throw Refusal.permanent(found.isEmpty()
          ? "Gemini has no batch job " + name + ", and no document of this pipeline waits for it"
          : "batch job " + name + " names no document of this pipeline");
    }
    Optional<RecordQueries.AnalysisState> analysis = queries.get().analysis(documentId.get());
    if (analysis.isEmpty()) {
      return new NotFinished(name + " is a job of this pipeline whose submission is not recorded yet");
    }
    if (!analysis.get().disowns(name)) {
      return new NotFinished(name + " is a job of " + analysis.get().documentKey() + ", deferred: its next try adopts"
          + " the job an earlier try made");
    }
    String reason = "batch job " + name + " is a stray second job of " + analysis.get().documentKey()
        + ", whose analysis names " + (analysis.get().job() == null ? "no job" : analysis.get().job());
    if (!BatchJobs.isTerminal(found.get())) {
      batchJobs.get().cancel(name);
      once.log().write("WARNING", "cancelled a stray second batch job", Map.of("job", name,
          "key", analysis.get().documentKey().value(), "analysisJob", String.valueOf(analysis.get().job())));
    }
    throw Refusal.permanent(reason);
  }

  /**
   * A gathered job no document waits for: early while its gathering's submission has not committed (it is still
   * open: its next try adopts the job), else a stray second job of it (the gathering names another), refused and
   * cancelled if it still runs.
   */
  private RuntimeException noDocumentWaitsFor(String gathering, String name, BatchJob job) throws Refusal {
    Gatherings.State state = gatherings.get().state(gathering);
    if (Gatherings.OPEN.equals(state.state())) {
      return new NotFinished(name + " is the job of the gathering " + gathering + ", whose submission is not"
          + " recorded yet");
    }
    String reason = "batch job " + name + " is no job the gathering " + gathering + " waits for (it names "
        + (state.job() == null ? "no job" : state.job()) + ")";
    if (state.state() != null && !name.equals(state.job()) && !BatchJobs.isTerminal(job)) {
      batchJobs.get().cancel(name);
      once.log().write("WARNING", "cancelled a stray second batch job", Map.of("job", name, "gathering", gathering,
          "gatheringJob", String.valueOf(state.job())));
    }
    throw Refusal.permanent(reason);
  }

  /**
   * Each answer goes to the document its request named (or to the job's only document), and only to a document whose
   * analysis names this job: an answer for any other is never billed or published here. A document the job gave no
   * answer for fails, saying so, rather than waiting for ever.
   */
  private List<DocumentResult> answered(BatchJob job, List<RecordQueries.Submitted> submitted) {
    String name = job.name().orElseThrow();
    Map<String, RecordQueries.Submitted> waiting = new LinkedHashMap<>();
    submitted.forEach(document -> waiting.put(document.documentKey().value(), document));
    String only = submitted.size() == 1 ? submitted.get(0).documentKey().value() : null;
    List<DocumentResult> results = new ArrayList<>();
    for (BatchResult result : batchJobs.get().results(job)) {
      RecordQueries.Submitted document = waiting.remove(result.documentKey().orElse(only));
      if (document == null) {
        continue;
      }
      IdempotencyKey key = document.documentKey();
      if (result.analysis().isPresent()) {
        Analysis analysis = result.analysis().get();
        long cost = records.get().costMicroUsd(analysis, true).orElse(document.reservation().microUsd());
        results.add(new DocumentResult(ResultMessage.analysed(key, document.source(), analysis, name),
            records.get().analysed(key, document.source(), analysis, name).and(document.reservation().settle(cost)),
            cost, analysis.model()));
      } else {
        // A request the job refused (Gemini's error for it) generated nothing, so it is not billed.
        String reason = result.error().orElse("no answer");
        results.add(DocumentResult.unanswered(ResultMessage.jobFailed(key, name, reason),
            records.get().jobFailed(key, name, reason).and(document.reservation().release())));
      }
    }
    results.addAll(failed(name, List.copyOf(waiting.values()), "the batch job " + name + " gave no answer for it"));
    return results;
  }

  private List<DocumentResult> failed(String name, List<RecordQueries.Submitted> submitted, String reason) {
    List<DocumentResult> results = new ArrayList<>();
    for (RecordQueries.Submitted document : submitted) {
      results.add(DocumentResult.unanswered(ResultMessage.jobFailed(document.documentKey(), name, reason),
          records.get().jobFailed(document.documentKey(), name, reason).and(document.reservation().release())));
    }
    return results;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> documents(Map<String, Object> outcome) {
    Object documents = outcome.get("documents");
    return documents instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
  }
}
