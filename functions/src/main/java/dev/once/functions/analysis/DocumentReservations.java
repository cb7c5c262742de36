package dev.once.functions.analysis;

import dev.once.budget.Budget;
import dev.once.budget.Reservation;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiErrors;
import dev.once.guard.Refusal;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * A document's paid call against the day's budget: its estimated cost set aside before the call (settled to the bill
 * by the commit that records the answer, released by a refusal before any work), or the document deferred.
 */
final class DocumentReservations {
  private final Budget budget;
  private final Supplier<CostEstimator> estimator;
  private final Supplier<RecordWrites> records;
  private final Supplier<RecordQueries> queries;

  DocumentReservations(Budget budget, Supplier<CostEstimator> estimator, Supplier<RecordWrites> records,
      Supplier<RecordQueries> queries) {
    this.budget = budget;
    this.estimator = estimator;
    this.records = records;
    this.queries = queries;
  }

  /**
   * Sets the call's estimated cost aside against the day's budget (nothing without a budget: no estimate, no read, no
   * write), or defers the document. Far from the day's edge the estimate is the model's ceiling (no call); nearer,
   * it is counted ({@code countTokens}, free): a failure there costs nothing, unless Gemini says the document itself
   * cannot be processed.
   */
  Reservation reserve(PaidCall call, byte[] content, boolean batch) throws Refusal {
    if (!budget.capped()) {
      return Reservation.NONE;
    }
    OptionalLong ceiling = estimator.get().ceiling(batch);
    if (ceiling.isPresent() && budget.farFromTheEdge(ceiling.getAsLong())) {
      return budget.reserve(call.key, ceiling.getAsLong(), reason -> deferred(call, reason, true));
    }
    long estimate;
    try {
      estimate = estimator.get().microUsd(content, call.document.mimeType(), batch);
    } catch (RuntimeException e) {
      if (GeminiErrors.isPermanent(e)) {
        String reason = GeminiErrors.describe(e);
        throw Refusal.permanent(reason, records.get().rejected(call.key, call.document, reason));
      }
      throw Refusal.notPerformed("could not estimate the call's cost: " + GeminiErrors.describe(e), e);
    }
    return budget.reserve(call.key, estimate, reason -> deferred(call, reason, budget.fitsADay(estimate)));
  }

  /**
   * The deferral's record, keeping the first deferral's time (one read, only when deferring), so the document keeps
   * its place in the reconciler's queue; one larger than a whole day's budget goes to the back of it instead, so that
   * it never holds back the documents deferred after it.
   */
  private SideWrites deferred(PaidCall call, String reason, boolean fitsADay) {
    call.largerThanADay = !fitsADay;
    Instant since = fitsADay ? call.deferredSince : null;
    if (since == null && fitsADay) {
      try {
        since = queries.get().analysis(call.key.documentId())
            .filter(analysis -> analysis.status() == DocumentStatus.DEFERRED)
            .map(RecordQueries.AnalysisState::deferredAt).orElse(null);
      } catch (RuntimeException e) {
        throw Refusal.notPerformed("could not read the document's analysis to defer it: " + e.getMessage(), e);
      }
    }
    return records.get().deferred(call.key, call.document, reason, since);
  }
}
