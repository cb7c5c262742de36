package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.budget.Reservation;
import dev.once.config.Lazy;
import dev.once.entry.Report;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.guard.Attempt;
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
 */
final class CompletionFlow {
  /** The job is not finished yet (the webhook came early, or the listing was stale): retry later. */
  static final class NotFinished extends Refusal {
    private static final long serialVersionUID = 1L;

    NotFinished(String message) {
      super(Kind.NOT_PERFORMED, message, null, SideWrites.NONE);
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
  private final Supplier<Records> records;
  private final Supplier<RecordQueries> queries;
  private final Supplier<Gatherings> gatherings;
  private final ResultPublication publication;
  private final int maxAttempts;

  /** @param maxAttempts the most jobs a document is run in before it is given up ({@code ONCE_MAX_ATTEMPTS}) */
  CompletionFlow(Once once, Supplier<BatchJobs> batchJobs, Supplier<Records> records, Supplier<RecordQueries> queries,
      Supplier<Gatherings> gatherings, ResultPublication publication, int maxAttempts) {
    this.once = once;
    this.gatherings = gatherings;
    this.batchJobs = batchJobs;
    this.records = records;
    this.queries = queries;
    this.publication = publication;
    this.maxAttempts = maxAttempts;
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
        attempt -> completion(attempt, jobKey, job));
    Report report = Report.of(jobKey, Effects.COMPLETE, completed);
    boolean settled = completed instanceof Outcome.Processed || completed instanceof Outcome.Duplicate
        || completed instanceof Outcome.Rejected; // not a job of this pipeline: nothing to publish, but say so once
    if (completed instanceof Outcome.Processed processed) {
      for (String detail : List.of("costMicroUsd", "model", "matched", "rerun", "gaveUp", "refused", "unattributed")) {
        if (processed.result().get(detail) != null) {
          report = report.with(detail, processed.result().get(detail));
        }
      }
      report = EventCounts.finished(report, processed.result().get("documents"),
          processed.result().get(EventCounts.GIVEN_UP));
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
    Optional<BatchJob> found = lookUp.get();
    String name = GeminiCompletionKeys.jobName(jobKey);
    if (found.isPresent() && !BatchJobs.isTerminal(found.get())) {
      throw new NotFinished(name + " is " + BatchJobs.state(found.get()).map(Enum::name).orElse("in an unknown state"));
    }
    // Whose job it is is decided before anything is downloaded: a foreign job in the same Gemini project, with a
    // large responses file, must cost one query, not an instance's memory on every reconciler run.
    Members members = members(name, found);
    if (found.isPresent() && answersNotThereYet(found.get())) {
      throw new NotFinished(name + " succeeded, but its answers are not there yet");
    }
    String state = found.map(job -> BatchJobs.state(job).map(Enum::name).orElse("UNKNOWN")).orElse("NOT_FOUND");
    // Deleted, or gone past Gemini's own retention: its documents get no answer from it, and go into another job.
    String ended = found.isEmpty() ? "Gemini has no batch job " + name
        : BatchJobs.succeeded(found.get()) ? null : "the batch job " + name + " ended " + state;
    // Downloaded only for a chunk still to complete: a completion resumed after its last chunk downloads nothing. A
    // job that failed, expired or was cancelled may still have answered some of its requests: those are used.
    Supplier<BatchAnswers> answers = Lazy.of(() -> BatchAnswers.of(
        found.map(job -> batchJobs.get().results(job)).orElse(List.of()), members.ids(),
        members.gathering() == null ? null : id -> BatchJobs.reference(members.gathering(), id),
        CompletionFlow::documentId));
    Tally tally = new Tally();
    int chunks = (members.size() + CHUNK - 1) / CHUNK;
    for (int chunk = 0; chunk < chunks; chunk++) {
      tally.add(completeChunk(jobKey, chunk, members, answers, ended));
    }
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("job", name);
    outcome.put("state", state);
    outcome.put("chunks", chunks);
    outcome.putAll(tally.toMap());
    if (members.inputFile() != null) {
      batchJobs.get().deleteInput(members.inputFile()); // every chunk is done: the job's input file is read no more
    }
    // The gathering the job was made for is no longer in flight: its place goes to the next job.
    return Completion.of(outcome, members.gathering() == null ? SideWrites.NONE : Gatherings.done(members.gathering()));
  }

  /**
   * A job reported succeeded whose output is not there yet: users report {@code BATCH_STATE_SUCCEEDED} before the
   * responses file can be read (tidyverse/ellmer#926 keeps polling for it). Taken for no answers at all, it would send
   * every document into another job, paid twice; so for an hour after it ended it is not finished yet, and then it is
   * what it looks like.
   */
  private static boolean answersNotThereYet(BatchJob job) {
    java.time.Instant ended = job.endTime().or(job::updateTime).orElse(java.time.Instant.EPOCH);
    return BatchJobs.succeeded(job) && job.dest().isEmpty()
        && ended.isAfter(java.time.Instant.now().minus(ANSWERS_GRACE));
  }

  /** How long a job reported succeeded without an output is waited for (see {@link #answersNotThereYet}). */
  static final java.time.Duration ANSWERS_GRACE = java.time.Duration.ofHours(1);

  /**
   * A completion taken over from a holder that stopped: if a chunk it began is still held (its lease outlives the
   * job's, taken later), the completion is left to it, before anything is asked of Gemini. Reads the chunks' records
   * in order, up to the first not done.
   */
  private void leftToAnotherHolder(IdempotencyKey jobKey) throws Refusal {
    for (int chunk = 0; ; chunk++) {
      IdempotencyKey chunkKey = chunkKey(jobKey, chunk);
      for (String effect : List.of(Effects.COMPLETE, Effects.PUBLISH)) {
        Optional<LedgerRecord> record = once.record(chunkKey, effect);
        if (record.isEmpty()) {
          return;
        }
        if (record.get().state() != dev.once.ledger.RecordState.DONE) {
          if (record.get().leaseLive()) {
            throw Refusal.notPerformed("chunk " + chunk + " of " + jobKey.value() + " is held by another process", null);
          }
          return;
        }
      }
    }
  }

  private static IdempotencyKey chunkKey(IdempotencyKey jobKey, int chunk) {
    return IdempotencyKey.of(jobKey.value() + CHUNK_SUFFIX + chunk);
  }

  /** The document id of a key an answer came back under; null when it is no key at all. */
  private static String documentId(String key) {
    try {
      return IdempotencyKey.of(key).documentId();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** What the chunks of a job did, added up for its completion's record and log line. */
  private static final class Tally {
    long cost;
    String model;
    int documents;
    int givenUp; // failed for good, whatever the reason: the operators' given-up count
    final Map<String, Integer> counts = new LinkedHashMap<>();
    final Map<String, Integer> matched = new LinkedHashMap<>();

    @SuppressWarnings("unchecked")
    void add(Map<String, Object> chunk) {
      documents += documents(chunk).size();
      givenUp += (int) documents(chunk).stream().filter(d -> Records.FAILED.equals(d.get("status"))).count();
      if (chunk.get("model") != null) {
        cost += ((Number) chunk.get("costMicroUsd")).longValue();
        model = String.valueOf(chunk.get("model"));
      }
      for (String count : List.of("rerun", "gaveUp", "refused", "unattributed")) {
        if (chunk.get(count) instanceof Number n) {
          counts.merge(count, n.intValue(), Integer::sum);
        }
      }
      if (chunk.get("matched") instanceof Map<?, ?> byHow) {
        ((Map<String, Object>) byHow).forEach((how, n) -> matched.merge(how, ((Number) n).intValue(), Integer::sum));
      }
    }

    Map<String, Object> toMap() {
      Map<String, Object> map = new LinkedHashMap<>();
      map.put("documents", documents);
      map.put(EventCounts.GIVEN_UP, givenUp);
      map.put("matched", Map.copyOf(matched));
      counts.forEach(map::put);
      if (model != null) {
        map.put("costMicroUsd", cost);
        map.put("model", model);
      }
      return map;
    }
  }

  /**
   * The job's documents, in an order every try of its completion sees alike, so chunk N is the same documents each
   * time. A gathered job's are the members its gathering was sealed with (read a chunk at a time); a job of one
   * document, or of a gathering submitted before gatherings were sealed, the documents whose analysis names it.
   */
  private record Members(String name, String gathering, List<String> ids, List<RecordQueries.Submitted> read,
      String inputFile) {
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
        return new Members(name, gathering.get(), state.members(), null, state.inputFile());
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
        submitted.stream().map(document -> document.documentKey().documentId()).toList(), submitted, null);
  }

  /**
   * Chunk {@code chunk} of the job's documents: one guarded commit (their analyses, bills, settled reservations, those
   * sent back to the queue; the first chunk also records what the answers given to no document used), then their
   * publishes, guarded by the same key. Returns the chunk's record (its summaries, counts, what they cost). Not
   * finished here (held by another holder, or its publishes not done) is retried with the whole completion.
   */
  private Map<String, Object> completeChunk(IdempotencyKey jobKey, int chunk, Members members,
      Supplier<BatchAnswers> answers, String ended) {
    IdempotencyKey chunkKey = chunkKey(jobKey, chunk);
    Outcome done = once.run(chunkKey, Effects.COMPLETE, Policy.DEFAULT.then(Effects.PUBLISH), attempt -> {
      List<RecordQueries.Submitted> documents = chunk(members, chunk);
      List<DocumentResult> results = new ArrayList<>();
      for (RecordQueries.Submitted document : documents) {
        results.add(result(members.name(), document, answers.get(), ended));
      }
      Completion completion = results(results);
      return chunk == 0 ? unattributed(completion, members, documents, answers.get()) : completion;
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

  /**
   * A chunk's commit: its documents' writes, and as its result the summaries to publish (none for a document sent
   * back to the queue), how each was matched or why not, and what their answers cost.
   */
  private static Completion results(List<DocumentResult> results) {
    List<Map<String, Object>> summaries = new ArrayList<>();
    List<SideWrites> writes = new ArrayList<>();
    Map<String, Integer> matched = new LinkedHashMap<>();
    Map<String, Integer> counts = new LinkedHashMap<>();
    long cost = 0;
    String model = null;
    for (DocumentResult result : results) {
      if (result.summary() != null) {
        summaries.add(result.summary());
      }
      writes.add(result.writes());
      cost += result.costMicroUsd();
      model = result.model() == null ? model : result.model();
      if (result.match() != null) {
        matched.merge(result.match().name().toLowerCase(java.util.Locale.ROOT), 1, Integer::sum);
      }
      if (result.count() != null) {
        counts.merge(result.count(), 1, Integer::sum);
      }
    }
    Map<String, Object> outcome = new LinkedHashMap<>();
    outcome.put("documents", summaries);
    outcome.put("matched", matched);
    outcome.putAll(counts);
    if (model != null) {
      outcome.put("costMicroUsd", cost);
      outcome.put("model", model);
    }
    return Completion.of(outcome, SideWrites.all(writes));
  }

  /**
   * The first chunk's commit also records what the job's answers given to no document used (Google bills them):
   * on the gathering, in the day's spend (on the day and counter of a reservation of the chunk), and in the cost its
   * completion logs.
   */
  private Completion unattributed(Completion chunk, Members members, List<RecordQueries.Submitted> documents,
      BatchAnswers answers) {
    List<BatchResult> unused = answers.unattributed();
    if (unused.isEmpty()) {
      return chunk;
    }
    long cost = 0;
    long prompt = 0;
    long output = 0;
    String model = null;
    for (BatchResult answer : unused) {
      if (answer.analysis().isPresent()) {
        Analysis analysis = answer.analysis().get();
        cost += records.get().costMicroUsd(analysis, true).orElse(0L);
        prompt += analysis.usage().promptTokens();
        output += analysis.usage().outputTokens();
        model = analysis.model();
      }
    }
    Map<String, Object> outcome = new LinkedHashMap<>(chunk.result());
    outcome.put("unattributed", unused.size());
    if (model != null) {
      outcome.put("costMicroUsd", ((Number) outcome.getOrDefault("costMicroUsd", 0L)).longValue() + cost);
      outcome.put("model", outcome.getOrDefault("model", model));
    }
    SideWrites writes = chunk.writes();
    if (members.gathering() != null) {
      writes = writes.and(Gatherings.unattributed(members.gathering(), unused.size(), cost, prompt, output));
    }
    Optional<Reservation> day = documents.stream().map(RecordQueries.Submitted::reservation)
        .filter(reservation -> !reservation.none()).findFirst();
    if (day.isPresent() && cost > 0) {
      writes = writes.and(new Reservation(day.get().day(), day.get().shard(), 0).settle(cost));
    }
    once.log().write("WARNING", "answers of a batch job went to no document", Map.of("job", members.name(),
        "answers", unused.size(), "costMicroUsd", cost));
    return Completion.of(outcome, writes);
  }

  /**
   * One document's share of a completion: its summary to publish (null: it goes into another job), its writes, what
   * its answer cost (0 without one), how it was matched, and what to count it as.
   */
  private record DocumentResult(Map<String, Object> summary, SideWrites writes, long costMicroUsd, String model,
      BatchAnswers.Match match, String count) {
    static DocumentResult unanswered(Map<String, Object> summary, SideWrites writes, String count) {
      return new DocumentResult(summary, writes, 0, null, null, count);
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

  /**
   * What one document of the job gets: its own answer (analysed, or failed when the answer holds no invoice; billed,
   * its reservation settled); Gemini's refusal of its request (failed, unbilled); or, when no answer can be given to
   * it, another job (queued again, its place and reservation kept) — unless it has been in {@code maxAttempts} jobs,
   * when it is given up (failed, saying why). Only a document whose analysis names this job is ever billed or published
   * here.
   */
  private DocumentResult result(String name, RecordQueries.Submitted document, BatchAnswers answers, String ended) {
    IdempotencyKey key = document.documentKey();
    BatchAnswers.Filed filed = answers.forDocument(key.documentId());
    switch (filed) {
      case BatchAnswers.Answered answered -> {
        Analysis analysis = answered.result().analysis().orElseThrow();
        long cost = records.get().costMicroUsd(analysis, true).orElse(document.reservation().microUsd());
        return new DocumentResult(ResultMessage.analysed(key, document.source(), analysis, name),
            records.get().analysed(key, document.source(), analysis, name).and(document.reservation().settle(cost)),
            cost, analysis.model(), answered.match(), null);
      }
      case BatchAnswers.Refused refused -> {
        // A request the job refused (Gemini's error for it) generated nothing, so it is not billed.
        String reason = "Gemini refused its request: " + refused.reason();
        return DocumentResult.unanswered(ResultMessage.jobFailed(key, name, reason),
            records.get().jobFailed(key, name, reason).and(document.reservation().release()), "refused");
      }
      case BatchAnswers.Unmatched unmatched -> {
        String why = ended == null ? unmatched.reason() : ended + "; " + unmatched.reason();
        int jobs = document.reruns() + 1;
        if (jobs >= maxAttempts) {
          String reason = "gave up after " + jobs + " batch jobs gave it no answer that could be matched to it: " + why;
          return DocumentResult.unanswered(ResultMessage.jobFailed(key, name, reason),
              records.get().jobFailed(key, name, reason).and(document.reservation().release()), "gaveUp");
        }
        return DocumentResult.unanswered(null, records.get().requeued(document, why, jobs, 0), "rerun");
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> documents(Map<String, Object> outcome) {
    Object documents = outcome.get("documents");
    return documents instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
  }
}
