package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.gemini.BatchJobs;
import dev.once.guard.Refusal;
import dev.once.observe.Log;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Why a batch job no document waits for is not completed. Another application's job (no display name of ours) is
 * refused for good. One of ours is either early — the submission that made it has not committed yet, or a retried try
 * will adopt it — and is retried later; or a stray second job (its documents' analyses or its gathering name another
 * job, or are finished), which is refused, never billed or published, and cancelled if it still runs.
 */
final class StrayJobs {
  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<RecordQueries> queries;
  private final Supplier<Gatherings> gatherings;
  private final Log log;

  StrayJobs(Supplier<BatchJobs> batchJobs, Supplier<RecordQueries> queries, Supplier<Gatherings> gatherings, Log log) {
    this.batchJobs = batchJobs;
    this.queries = queries;
    this.gatherings = gatherings;
    this.log = log;
  }

  /**
   * A job no document's analysis names: the refusal to throw, or (returned) the {@link CompletionFlow.NotFinished} of
   * a job whose submission is not recorded yet.
   */
  RuntimeException noDocumentWaits(String name, Optional<BatchJob> found) throws Refusal {
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
      return new CompletionFlow.NotFinished(name + " is a job of this pipeline whose submission is not recorded yet");
    }
    if (!analysis.get().disowns(name)) {
      return new CompletionFlow.NotFinished(name + " is a job of document " + analysis.get().documentKey().logHash()
          + ", deferred: its next try adopts the job an earlier try made");
    }
    String reason = "batch job " + name + " is a stray second job of document "
        + analysis.get().documentKey().logHash() + ", whose analysis names "
        + (analysis.get().job() == null ? "no job" : analysis.get().job());
    if (!BatchJobs.isTerminal(found.get())) {
      batchJobs.get().cancel(name);
      log.write("WARNING", "cancelled a stray second batch job", Map.of("job", name,
          "key", analysis.get().documentKey().value(), "analysisJob", String.valueOf(analysis.get().job())));
    }
    throw Refusal.permanent(reason);
  }

  /**
   * A gathered job no document waits for: early while its gathering's submission has not committed (it is still
   * open: its next try adopts the job), else a stray second job of it (the gathering names another), refused and
   * cancelled if it still runs.
   */
  RuntimeException noDocumentWaitsFor(String gathering, String name, BatchJob job) throws Refusal {
    Gatherings.State state = gatherings.get().state(gathering);
    if (Gatherings.OPEN.equals(state.state())) {
      return new CompletionFlow.NotFinished(name + " is the job of the gathering " + gathering + ", whose submission"
          + " is not recorded yet");
    }
    String reason = "batch job " + name + " is no job the gathering " + gathering + " waits for (it names "
        + (state.job() == null ? "no job" : state.job()) + ")";
    if (state.state() != null && !name.equals(state.job()) && !BatchJobs.isTerminal(job)) {
      batchJobs.get().cancel(name);
      log.write("WARNING", "cancelled a stray second batch job", Map.of("job", name, "gathering", gathering,
          "gatheringJob", String.valueOf(state.job())));
    }
    throw Refusal.permanent(reason);
  }
}
