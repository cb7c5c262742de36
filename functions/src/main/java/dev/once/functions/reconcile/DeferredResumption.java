package dev.once.functions.reconcile;

import dev.once.budget.Budget;
import dev.once.entry.Report;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordQueries;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The reconciler's last pass: documents deferred for want of the day's budget, resumed while the budget takes them.
 */
final class DeferredResumption {
  private final Supplier<RecordQueries> queries;
  private final Supplier<DocumentFlow> documents;
  private final Budget spending;
  private final int perRun;
  private final InstantSource clock;
  private final Log log;

  /** @param perRun how many deferred documents a run resumes at most */
  DeferredResumption(Supplier<RecordQueries> queries, Supplier<DocumentFlow> documents, Budget spending, int perRun,
      InstantSource clock, Log log) {
    this.queries = queries;
    this.documents = documents;
    this.spending = spending;
    this.perRun = perRun;
    this.clock = clock;
    this.log = log;
  }

  /**
   * Deferred documents, oldest deferral first, each through the document flow (which claims it as a delivery of its
   * event would, so it is analysed once whoever gets there first), until one is deferred again: the day's budget is
   * used up, and the rest wait too. One larger than a whole day's budget, or a copy still waiting for the first
   * document of its bytes to be analysed, is passed over (deferred again, at the back).
   */
  void resume(ReconcileSummary summary, Instant deadline) {
    List<RecordQueries.Deferred> waiting;
    try {
      if (spending.exhausted()) {
        return;
      }
      waiting = queries.get().deferred(perRun);
    } catch (RuntimeException e) {
      summary.failed++;
      summary.truncated = true;
      log.error("the reconciler could not read the deferred documents",
          Map.of("function", ReconcileFlow.FUNCTION, "error", String.valueOf(e)));
      return;
    }
    for (RecordQueries.Deferred deferred : waiting) {
      if (clock.instant().isAfter(deadline)) {
        summary.truncated = true;
        return;
      }
      long started = System.nanoTime();
      try {
        Report report = documents.get().resume(deferred);
        report.with("resumed", true).log(log, ReconcileFlow.FUNCTION, started);
        switch (report.outcome()) {
          case DEFERRED -> {
            if (!Boolean.TRUE.equals(report.details().get(DocumentFlow.LARGER_THAN_A_DAY))
                && !Boolean.TRUE.equals(report.details().get(DocumentFlow.WAITING_FOR_CONTENT))) {
              return;
            }
            // Waits for a larger budget, or for the first copy of its bytes, not for room today: the ones after it
            // may still fit.
          }
          case PROCESSED, REJECTED -> summary.deferredResumed++;
          case IN_FLIGHT -> summary.inFlight++;
          default -> {
            // resumed meanwhile by a redelivery of its event
          }
        }
      } catch (RuntimeException e) {
        summary.failed++;
        EventLog.record(log, ReconcileFlow.FUNCTION, deferred.documentKey().value(), Effects.ANALYSE,
            OutcomeLabel.FAILED, 0,
            EventLog.elapsedMs(started), Map.of("error", String.valueOf(e), "resumed", true));
      }
    }
  }
}
