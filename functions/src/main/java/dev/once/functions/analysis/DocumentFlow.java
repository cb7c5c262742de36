package dev.once.functions.analysis;

import dev.once.budget.Budget;
import dev.once.budget.Reservation;
import dev.once.entry.Report;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.gemini.Analysis;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiErrors;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Held;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.key.StorageObjectKeys;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.EventCounts;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultMessage;
import dev.once.pipeline.ResultPublication;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A document uploaded: validate it, then analyse it once — the {@code analyse} effect, whichever the mode (sync:
 * generateContent, recording the analysis and its bill in the commit that completes the claim; batch: queue it for a
 * batch job of many documents ({@link BatchSubmitter}), whose completion records them later) — then, in sync mode or for a refused document, publish the
 * result once. The pre-check reads the last record of the mode's chain only, so a duplicate of a finished document
 * costs one read and builds neither the Storage nor the Gemini client. A delivery past it reads the document before
 * its claim, so the claim's commit also claims the document's content ({@link SameContent#claimingContent}); one that
 * races the first delivery has read it for nothing.
 *
 * <p>Every paid call may have happened when it failed: each try is recorded before it is made, the SDK never repeats
 * one, and a document is given up (failed, published as such) after {@code maxTries} tries that may have been billed;
 * refusals Google does not bill do not count. In batch mode the paid call is the job's ({@link BatchSubmitter}).
 *
 * <p>With a daily budget, each paid call first reserves its estimated cost ({@link CostEstimator}); the commit that
 * records its answer settles the reservation to the bill (in batch mode, reserved when the document is queued, the
 * job's completion does), a refusal
 * before any work releases it, and a call that may have been billed keeps it. A document the day's budget cannot take
 * is deferred: recorded as such, acknowledged, and resumed by the reconciler ({@link #resume}).
 */
public final class DocumentFlow {
  public enum Mode { SYNC, BATCH }

  /** The log detail of a document deferred because its estimate alone is more than a whole day's budget. */
  public static final String LARGER_THAN_A_DAY = "largerThanTheDailyBudget";
  /** The log detail of a copy deferred until the first document of its bytes is analysed, or passes its claim on. */
  public static final String WAITING_FOR_CONTENT = "waitingForContent";

  /** The paid call's bounds: its timeout (the lease must outlast it) and the cap of tries that may be billed. */
  public record PaidCalls(Duration timeout, int maxTries) {}

  private final Once once;
  private final Supplier<RecordWrites> records;
  private final Supplier<InvoiceAnalyzer> analyzer;
  private final Supplier<BatchSubmitter> submitter;
  private final ResultPublication publication;
  private final Mode mode;
  private final PaidCalls paid;
  private final SameContent sameContent;
  private final DocumentChecks checks;
  private final DocumentReservations reservations;

  public DocumentFlow(Once once, Supplier<RecordWrites> records, Supplier<RecordQueries> queries, Budget budget,
      Supplier<CostEstimator> estimator, Supplier<DocumentReader> reader, Supplier<InvoiceAnalyzer> analyzer,
      Supplier<BatchSubmitter> submitter, ResultPublication publication, Mode mode, long maxBytes, PaidCalls paid) {
    this.once = once;
    this.records = records;
    this.analyzer = analyzer;
    this.submitter = submitter;
    this.publication = publication;
    this.mode = mode;
    this.paid = paid;
    this.sameContent = new SameContent(once, queries);
    this.checks = new DocumentChecks(records, reader, maxBytes);
    this.reservations = new DocumentReservations(budget, estimator, records, queries);
  }

  /** The document generation's key: {@code gcs:bucket/name#generation}. */
  public static IdempotencyKey key(DocumentSource document) {
    return StorageObjectKeys.of(document.bucket(), document.name(), document.generation());
  }

  public Report handle(DocumentSource document, IdempotencyKey key) {
    return handle(document, key, null);
  }

  /**
   * A deferred document, as the reconciler resumes it: the same flow as a delivery of its event, which it races
   * through the ledger like any duplicate, so it is analysed once. Deferred again, it keeps its first deferral's time.
   */
  public Report resume(RecordQueries.Deferred deferred) {
    return handle(deferred.source(), deferred.documentKey(), deferred.deferredAt());
  }

  /** @param deferredSince when the document was first deferred, if known */
  private Report handle(DocumentSource document, IdempotencyKey key, Instant deferredSince) {
    // The cheap check reads the last record of this mode's chain: a duplicate costs this one read.
    boolean sync = mode == Mode.SYNC;
    String lastEffect = sync ? Effects.PUBLISH : Effects.ANALYSE;
    Optional<Outcome> earlier = once.peek(key, lastEffect, sync ? null : document.fingerprint());
    if (earlier.isPresent() && (sync || !needsPublishing(earlier.get()))) {
      return Report.of(key, lastEffect, earlier.get());
    }
    // One effect for both modes, so a document whose deliveries land on a sync and a batch revision during a
    // change of ANALYSIS_MODE is still analysed (and paid for) once.
    boolean analysedBefore = !sync && earlier.isPresent();
    PaidCall call = new PaidCall(key, document, deferredSince);
    Outcome analysed = analysedBefore
        ? earlier.get()
        : once.run(key, Effects.ANALYSE, claimPolicy(call),
            attempt -> sync ? analyse(attempt, call) : queue(attempt, call));
    Report report = Report.of(key, Effects.ANALYSE, analysed);
    if (analysed instanceof Outcome.Rejected rejected) {
      report = report.with("reason", rejected.reason()); // refused or given up: the log line says why
      if (rejected.gaveUp() && rejected.now()) {
        report = EventCounts.finished(report, 1, 1);
      }
    }
    if (analysed instanceof Outcome.Processed) {
      for (Map.Entry<String, Object> detail : call.details.entrySet()) {
        report = report.with(detail.getKey(), detail.getValue());
      }
    }
    ResultMessage summary = switch (analysed) {
      // The webhook never comes for a refused document: its refusal is published at once.
      case Outcome.Rejected rejected -> rejected.gaveUp()
          ? ResultMessage.gaveUp(key, document, rejected.reason())
          : ResultMessage.rejected(key, document, rejected.reason());
      // Recorded (a queued document has nothing to publish yet), or not done: in flight, a conflict, deferred.
      default -> toPublish(analysed).orElse(null);
    };
    if (analysed instanceof Outcome.Deferred deferred) {
      report = report.with("reason", deferred.reason());
      if (call.waitingForContent) {
        return report.with(WAITING_FOR_CONTENT, true);
      }
      return call.largerThanADay ? report.with(LARGER_THAN_A_DAY, true) : report;
    }
    if (summary == null) {
      if (!sync && analysed instanceof Outcome.Processed) {
        gatherDue();
      }
      return report;
    }
    // Analysed before: most likely published before too, which one read tells, without a claim's failed write.
    Optional<Held> held = analysed instanceof Outcome.Processed processed ? processed.next() : Optional.empty();
    Outcome published = analysedBefore
        ? once.peek(key, Effects.PUBLISH).orElseGet(() -> publication.publish(key, summary))
        : publication.publish(key, summary, held);
    return report.then(Effects.PUBLISH, published);
  }

  /**
   * The analysis is a paid effect: at most {@code maxTries} tries that may have been billed, then the document fails
   * with the reason; a lease that outlasts the paid call; in sync mode its publication claimed in the same commit.
   */
  private Policy policy(IdempotencyKey key, DocumentSource document) {
    Policy policy = Policy.fingerprint(document.fingerprint())
        .capped(paid.maxTries(), reason -> records.get().gaveUp(key, document, reason))
        .leaseAtLeast(paid.timeout().plus(DocumentReader.PAID_LEASE_MARGIN));
    return mode == Mode.SYNC ? policy.then(Effects.PUBLISH) : policy;
  }

  /**
   * The analysis's policy, the document read first: when its bytes are valid, the claim's commit also claims its
   * content naming it ({@link SameContent#claimingContent}), one commit fewer for the first copy of new bytes.
   */
  private Policy claimPolicy(PaidCall call) {
    Policy policy = policy(call.key, call.document);
    byte[] content = call.readBeforeClaim(checks);
    return content == null ? policy : SameContent.claimingContent(policy, call.key, call.document, content);
  }

  /** A finished analysis still to be published: a refusal, or an analysis made in sync mode. */
  private static boolean needsPublishing(Outcome analysed) {
    return analysed instanceof Outcome.Rejected || toPublish(analysed).isPresent();
  }

  /** The result an analysis recorded to publish: none for a queued document, or one not recorded done. */
  private static Optional<ResultMessage> toPublish(Outcome analysed) {
    return analysed.recorded(AnalyseResult.CODEC).flatMap(AnalyseResult::toPublish);
  }

  /**
   * A document was just queued: submit the jobs now due (a full one, or one whose oldest document waited long
   * enough), so a burst does not wait for the reconciler. Its failure is the reconciler's to make good: the document
   * is queued, and its event done.
   */
  private void gatherDue() {
    try {
      submitter.get().submitIfDue();
    } catch (RuntimeException e) {
      once.log().write("WARNING", "could not submit the batch jobs due; the reconciler will",
          Map.of("error", String.valueOf(e)));
    }
  }

  private Completion analyse(Attempt attempt, PaidCall call) throws Refusal {
    IdempotencyKey key = call.key;
    DocumentSource document = call.document;
    byte[] content = call.content(checks);
    Optional<Completion> copy = copyOfEarlier(call, content, attempt.settledAlongside());
    if (copy.isPresent()) {
      return copy.get();
    }
    Reservation reservation = reservations.reserve(call, content, false);
    Analysis analysis;
    try {
      attempt.ensureLease(paid.timeout());
      analysis = analyzer.get().analyse(content, document.mimeType());
    } catch (Refusal e) {
      if (!e.is(Refusal.Kind.NOT_PERFORMED)) {
        throw e;
      }
      throw Refusal.notPerformed(e.getMessage(), e, reservation.release());
    } catch (RuntimeException e) {
      throw classified(key, document, e, reservation, GeminiErrors::refusedBeforeWork);
    }
    long cost = records.get().costMicroUsd(analysis, false).orElse(reservation.microUsd());
    call.details.put("costMicroUsd", cost);
    call.details.put("model", analysis.model());
    call.details.put(EventCounts.DOCUMENTS, 1L);
    call.details.put(EventCounts.GIVEN_UP, analysis.succeeded() ? 0L : 1L);
    return Completion.of(AnalyseResult.CODEC,
        new AnalyseResult.ToPublish(ResultMessage.analysed(key, document, analysis, null, attempt.generation())),
        records.get().analysed(key, document, analysis, null, attempt.generation()).and(reservation.settle(cost)));
  }

  /**
   * Batch mode: the document is validated, its cost reserved (or it is deferred), and it is queued, in the commit
   * that completes its claim; {@link BatchSubmitter} gathers it into a job with others. Nothing here is paid for.
   */
  private Completion queue(Attempt attempt, PaidCall call) throws Refusal {
    byte[] content = call.content(checks);
    Optional<Completion> copy = copyOfEarlier(call, content, attempt.settledAlongside());
    if (copy.isPresent()) {
      return copy.get();
    }
    Reservation reservation = reservations.reserve(call, content, true);
    return Completion.of(AnalyseResult.CODEC, AnalyseResult.QUEUED,
        records.get().queued(call.key, call.document, content.length, reservation, attempt.generation()));
  }

  /**
   * This document's completion as a copy of the same bytes uploaded before ({@link SameContent}); empty when it is
   * the one to analyse. A copy waiting for the first is deferred, nothing reserved or published.
   */
  private Optional<Completion> copyOfEarlier(PaidCall call, byte[] content, boolean claimedWithAnalysis)
      throws Refusal {
    return switch (sameContent.judge(call.key, call.document, content, claimedWithAnalysis)) {
      case SameContent.First first -> Optional.empty();
      case SameContent.CopyOfAnalysed copy -> {
        call.details.put("duplicateOfHash", copy.first().logHash()); // the log line names keys by hash (EventLog)
        yield Optional.of(Completion.of(AnalyseResult.CODEC,
            new AnalyseResult.ToPublish(ResultMessage.duplicate(call.key, call.document, copy.first())),
            records.get().duplicate(call.key, call.document, copy.first())));
      }
      case SameContent.Waiting waiting -> {
        call.waitingForContent = true;
        throw Refusal.deferred(waiting.reason(), records.get().waiting(call.key, call.document, waiting.reason(),
            waiting.first()));
      }
    };
  }

  /**
   * What a Gemini failure means: the document's fault is refused for good; a failure {@code notPerformed} proves
   * happened before any work (nothing billed, no job made) releases the try without counting it; either takes the
   * reservation back. Anything else may have been billed, and is rethrown as such: its reservation stays.
   */
  private RuntimeException classified(IdempotencyKey key, DocumentSource document, RuntimeException e,
      Reservation reservation, Predicate<Throwable> notPerformed) throws Refusal {
    if (GeminiErrors.isPermanent(e)) {
      String reason = GeminiErrors.describe(e);
      throw Refusal.permanent(reason, records.get().rejected(key, document, reason).and(reservation.release()));
    }
    if (notPerformed.test(e)) {
      return Refusal.notPerformed(GeminiErrors.describe(e), e, reservation.release());
    }
    return e;
  }
}
