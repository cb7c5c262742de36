package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.config.Lazy;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Completion;
import dev.once.guard.Held;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
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
 * terminal state with batches.get, fetch its answers, and complete its documents in chunks of {@link #CHUNK}: each
 * chunk one commit through {@link Once} (keyed by the job's key and the chunk's number: its documents' analyses, bills
 * and settled reservations), then that chunk's publishes, once. Only after the last chunk does the commit that
 * completes the job's claim mark its gathering done (no longer in flight). A crash anywhere resumes where it stopped:
 * a chunk done before costs one read, and its publishes are not repeated once recorded. A job that failed or expired
 * is recorded and published as such. The pre-check reads the job's publish record: a job completed before costs one
 * read. Each document's reservation of the day's budget, recorded at submission, is settled to its bill in its
 * chunk's commit (released when the job gave it no answer, which Gemini does not bill).
 */
final class CompletionFlow {
  /** The job is not finished yet (the webhook came early, or the listing was stale): retry later. */
  static final class NotFinished extends Refusal {
    private static final long serialVersionUID = 1L;

    NotFinished(String message) {
      super(Kind.NOT_PERFORMED, message, null, SideWrites.NONE);
    }
  }

  /**
   * Documents per chunk of a completion: one commit writes each one's analysis (the invoice is at most
   * InvoicePrompt.MAX_OUTPUT_TOKENS, ~32 KB of JSON), bill and settled reservation, ~3.5 MB at worst: under Firestore's
   * 10 MiB per request and the emulator's 4 MiB. The chunk's ledger record keeps its published summaries (~0.5 KB each).
   */
  static final int CHUNK = 100;
  /** What a chunk's key adds to the job's: {@code gemini:batches/ID#chunk-N}. */
  static final String CHUNK_SUFFIX = "#chunk-";

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
    boolean settled = completed instanceof Outcome.Processed || completed instanceof Outcome.Duplicate
        || completed instanceof Outcome.Rejected; // not a job of this pipeline: nothing to publish, but say so once
    if (completed instanceof Outcome.Processed processed && processed.result().get("costMicroUsd") != null) {
      report = report.with("costMicroUsd", processed.result().get("costMicroUsd"))
          .with("model", String.valueOf(processed.result().get("model")));
    }
    Optional<Held> held = completed instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    // Every chunk published its own documents: the job's publish record only says so, for the one-read pre-check.
    return settled ? report.then(Effects.PUBLISH, publication.publishAll(jobKey, List.of(), held)) : report;
  }

  private Completion completion(IdempotencyKey jobKey, Optional<BatchJob> found) throws Refusal {
    String name = GeminiCompletionKeys.jobName(jobKey);
    if (found.isPresent() && !BatchJobs.isTerminal(found.get())) {
      throw new NotFinished(name + " is " + BatchJobs.state(found.get()).map(Enum::name).orElse("in an unknown state"));
    }
    // Whose job it is is decided before anything is downloaded: a foreign job in the same Gemini project, with a
    // large responses file, must cost one query, not an instance's memory on every reconciler run.
    Members members = members(name, found);
    String state;
    Supplier<Map<String, BatchResult>> answers = null;
    String failure = null;
    if (found.isEmpty()) {
      // Deleted, or gone past Gemini's own retention: its documents will get no answer; they fail, and say why.
      state = "NOT_FOUND";
      failure = "Gemini has no batch job " + name;
    } else {
      BatchJob job = found.get();
      state = BatchJobs.state(job).map(Enum::name).orElse("UNKNOWN");
      if (BatchJobs.succeeded(job)) {
        // Downloaded only for a chunk still to complete: a completion resumed after its last chunk downloads nothing.
        answers = Lazy.of(() -> byKey(batchJobs.get().results(job)));
      } else {
        failure = "the batch job ended " + state + job.error().flatMap(e -> e.message()).map(m -> ": " + m).orElse("");
      }
    }
    long cost = 0;
    String model = null;
    int documents = 0;
    int chunks = (members.size() + CHUNK - 1) / CHUNK;
    for (int chunk = 0; chunk < chunks; chunk++) {
      Map<String, Object> done = completeChunk(jobKey, chunk, members, answers, failure);
      documents += documents(done).size();
      if (done.get("model") != null) {
        cost += ((Number) done.get("costMicroUsd")).longValue();
        model = String.valueOf(done.get("model"));
      }
    }
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("job", name);
    outcome.put("state", state);
    outcome.put("documents", documents);
    outcome.put("chunks", chunks);
    if (model != null) {
      outcome.put("costMicroUsd", cost);
      outcome.put("model", model);
    }
    found.ifPresent(batchJobs.get()::deleteInput); // every chunk is done: the job's input file is read no more
    // The gathering the job was made for is no longer in flight: its place goes to the next job.
    return Completion.of(outcome, members.gathering() == null ? SideWrites.NONE : Gatherings.done(members.gathering()));
  }

  /**
   * The job's documents, in an order every try of its completion sees alike, so chunk N is the same documents each
   * time. A gathered job's are the members its gathering was sealed with (read a chunk at a time); a job of one
   * document, or of a gathering submitted before gatherings were sealed, the documents whose analysis names it.
   */
  private record Members(String name, String gathering, List<String> ids, List<RecordQueries.Submitted> read) {
    int size() {
      return ids.size();
    }
  }

  private Members members(String name, Optional<BatchJob> found) throws Refusal {
    Optional<String> gathering = found.flatMap(BatchJobs::gatheringId);
    List<RecordQueries.Submitted> submitted = null;
    if (gathering.isEmpty()) {
      submitted = queries.get().submittedTo(name);
      // A gathered job Gemini no longer has: its documents' analyses name their gathering.
      gathering = submitted.stream().map(RecordQueries.Submitted::gathering).filter(java.util.Objects::nonNull)
          .findFirst();
    }
    if (gathering.isPresent()) {
      Gatherings.State state = gatherings.get().state(gathering.get());
      if (name.equals(state.job()) && state.sealed()) {
        return new Members(name, gathering.get(), state.members(), null);
      }
      if (!name.equals(state.job()) && found.isPresent()) {
        throw noDocumentWaitsFor(gathering.get(), name, found.get());
      }
    }
    if (submitted == null) {
      submitted = queries.get().submittedTo(name);
    }
    if (submitted.isEmpty()) {
      throw noDocumentWaits(name, found);
    }
    return new Members(name, gathering.orElse(null),
        submitted.stream().map(document -> document.documentKey().documentId()).toList(), submitted);
  }

  /**
   * Chunk {@code chunk} of the job's documents: one guarded commit (their analyses, bills, settled reservations),
   * then their publishes, guarded by the same key. Returns the chunk's record (its summaries, what they cost).
   * Not finished here (held by another holder, or its publishes not done) is retried with the whole completion.
   */
  private Map<String, Object> completeChunk(IdempotencyKey jobKey, int chunk, Members members,
      Supplier<Map<String, BatchResult>> answers, String failure) {
    IdempotencyKey chunkKey = IdempotencyKey.of(jobKey.value() + CHUNK_SUFFIX + chunk);
    Outcome done = once.run(chunkKey, Effects.COMPLETE, Policy.DEFAULT.then(Effects.PUBLISH), attempt -> {
      List<RecordQueries.Submitted> documents = chunk(members, chunk);
      return results(answers == null ? failed(members.name(), documents, failure)
          : answered(members.name(), documents, answers.get(), members.size() == 1));
    });
    Map<String, Object> result = switch (done) {
      case Outcome.Processed processed -> processed.result();
      case Outcome.Duplicate duplicate -> duplicate.result();
      default -> throw Refusal.notPerformed("chunk " + chunk + " of " + members.name() + " is not completed yet: "
          + done.getClass().getSimpleName(), null);
    };
    Optional<Held> held = done instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    Outcome published = publication.publishAll(chunkKey, documents(result), held);
    if (!(published instanceof Outcome.Processed) && !(published instanceof Outcome.Duplicate)) {
      throw Refusal.notPerformed("chunk " + chunk + " of " + members.name() + " is not published yet: "
          + published.getClass().getSimpleName(), null);
    }
    return result;
  }

  private List<RecordQueries.Submitted> chunk(Members members, int chunk) {
    int from = chunk * CHUNK;
    int to = Math.min(members.size(), from + CHUNK);
    return members.read() != null ? members.read().subList(from, to)
        : queries.get().waitingFor(members.name(), members.gathering(), members.ids().subList(from, to));
  }

  /** A chunk's commit: its documents' writes, and as its result their summaries and what their answers cost. */
  private static Completion results(List<DocumentResult> results) {
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
    outcome.put("documents", summaries);
    if (model != null) {
      outcome.put("costMicroUsd", cost);
      outcome.put("model", model);
    }
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
      return new NotFinished(name + " is a job of document " + analysis.get().documentKey().logHash()
          + ", deferred: its next try adopts the job an earlier try made");
    }
    String reason = "batch job " + name + " is a stray second job of document "
        + analysis.get().documentKey().logHash() + ", whose analysis names "
        + (analysis.get().job() == null ? "no job" : analysis.get().job());
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

  /** A finished job's answers by the key their request named (an answer naming none: under the empty key). */
  private static Map<String, BatchResult> byKey(List<BatchResult> results) {
    Map<String, BatchResult> answers = new java.util.HashMap<>();
    results.forEach(result -> answers.putIfAbsent(result.documentKey().orElse(""), result));
    return answers;
  }

  /**
   * Each answer goes to the document its request named (or to the job's only document), and only to a document whose
   * analysis names this job: an answer for any other is never billed or published here. A document the job gave no
   * answer for fails, saying so, rather than waiting for ever.
   */
  private List<DocumentResult> answered(String name, List<RecordQueries.Submitted> documents,
      Map<String, BatchResult> answers, boolean onlyDocument) {
    List<DocumentResult> results = new ArrayList<>();
    for (RecordQueries.Submitted document : documents) {
      IdempotencyKey key = document.documentKey();
      BatchResult result = answers.get(key.value());
      if (result == null && onlyDocument) {
        result = answers.get("");
      }
      if (result == null) {
        results.addAll(failed(name, List.of(document), "the batch job " + name + " gave no answer for it"));
      } else if (result.analysis().isPresent()) {
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
