package dev.once.functions.completion;

import com.google.genai.types.BatchJob;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.JobNames;
import dev.once.gemini.JobStates;
import dev.once.guard.Refusal;
import dev.once.observe.Log;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Why a batch job no document waits for is not completed. Another application's job (no display name of ours) is
 * refused for good. One of ours is either early — the submission that made it has not committed yet, or a retried try
 * will adopt it — and is retried later; or a stray second job (its documents' analyses or its gathering name another
 * job, or are finished), which is refused, never billed or published, and cancelled if it still runs.
 */
public final class StrayJobs {
  /** A running job is looked at as a possible stray only once it is this old. */
  public static final Duration STRAY_AFTER = Duration.ofMinutes(2);

  private final Supplier<BatchJobs> batchJobs;
  private final Supplier<RecordQueries> queries;
  private final Supplier<Gatherings> gatherings;
  private final Log log;

  public StrayJobs(Supplier<BatchJobs> batchJobs, Supplier<RecordQueries> queries, Supplier<Gatherings> gatherings,
      Log log) {
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
    Optional<String> gathering = found.flatMap(JobNames::gatheringId);
    if (gathering.isPresent()) {
      return noDocumentWaitsFor(gathering.get(), name, found.get());
    }
    Optional<String> documentId = found.flatMap(JobNames::documentId);
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
    if (!JobStates.isTerminal(found.get())) {
      cancel(name, Map.of("key", analysis.get().documentKey().value(),
          "analysisJob", String.valueOf(analysis.get().job())));
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
    if (disowns(state, name) && !JobStates.isTerminal(job)) {
      cancel(name, Map.of("gathering", gathering, "gatheringJob", String.valueOf(state.job())));
    }
    throw Refusal.permanent(reason);
  }

  /**
   * A running job of this pipeline that its document's analysis, or its gathering, disowns is a stray second job (an
   * earlier try made it, and the retry did not find it, or adopted another of the same name): cancelled, so it is not
   * paid for to the end; true when it was. A deferred document's is not: its next try adopts it; nor a gathering's
   * still open: its next try adopts the oldest job of its name, and only then are the others strays. Only jobs older
   * than {@link #STRAY_AFTER} are looked at (one read each), so a submission still committing is never taken for one.
   */
  public boolean cancelIfStray(BatchJob job, Instant now) {
    boolean settledIn = job.createTime().map(created -> created.isBefore(now.minus(STRAY_AFTER))).orElse(false);
    if (!settledIn || job.name().isEmpty()) {
      return false;
    }
    String name = job.name().get();
    Optional<String> gathering = JobNames.gatheringId(job);
    if (gathering.isPresent()) {
      Gatherings.State state = gatherings.get().state(gathering.get());
      return disowns(state, name)
          && cancel(name, Map.of("gathering", gathering.get(), "gatheringJob", String.valueOf(state.job())));
    }
    Optional<String> documentId = JobNames.documentId(job);
    if (documentId.isEmpty()) {
      return false;
    }
    Optional<RecordQueries.AnalysisState> analysis = queries.get().analysis(documentId.get());
    return analysis.isPresent() && analysis.get().disowns(name) && cancel(name,
        Map.of("key", analysis.get().documentKey().value(), "analysisJob", String.valueOf(analysis.get().job())));
  }

  /** A gathering past open that names another job (or none) disowns this one. */
  private static boolean disowns(Gatherings.State state, String name) {
    return state.state() != null && !Gatherings.OPEN.equals(state.state()) && !name.equals(state.job());
  }

  private boolean cancel(String name, Map<String, String> why) {
    batchJobs.get().cancel(name);
    Map<String, Object> fields = new LinkedHashMap<>(why);
    fields.put("job", name);
    log.write("WARNING", "cancelled a stray second batch job", fields);
    return true;
  }
}
