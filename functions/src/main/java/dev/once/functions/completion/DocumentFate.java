package dev.once.functions.completion;

import dev.once.gemini.Analysis;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.BatchResult;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What one document of a finished batch job gets: its own answer (analysed, or failed when the answer holds no
 * invoice; billed, its reservation settled); Gemini's refusal of its request (failed, unbilled); or, when no answer can
 * be given to it, another job (queued again, its place kept) — unless it has been in {@code maxAttempts} jobs, when it
 * is given up (failed, saying why and what each billed try returned). Only a document whose analysis names this job is
 * ever billed or published here.
 */
final class DocumentFate {
  private final Supplier<RecordWrites> records;
  private final int maxAttempts;

  /** @param maxAttempts the most jobs a document is run in before it is given up ({@code ONCE_MAX_ATTEMPTS}) */
  DocumentFate(Supplier<RecordWrites> records, int maxAttempts) {
    this.records = records;
    this.maxAttempts = maxAttempts;
  }

  /**
   * @param job the job's name
   * @param ended why the job gave its documents no answer (it failed, expired, was cancelled or its answers are gone;
   *     null: it succeeded)
   * @param halved the most documents its next job may hold, when the job failed for what its requests hold (0: no
   *     bound): a split to isolate a poison document, not counted as a try
   */
  DocumentResult of(String job, RecordQueries.Submitted document, BatchAnswers answers, String ended, int halved) {
    IdempotencyKey key = document.documentKey();
    return switch (answers.forDocument(key.documentId())) {
      case BatchAnswers.Answered answered -> answered(job, document, answered);
      case BatchAnswers.Refused refused -> {
        // A request the job refused for what the document holds (Gemini's error for it) generated nothing: not billed.
        String reason = "Gemini refused its request: " + refused.reason();
        yield DocumentResult.unanswered(ResultMessage.jobFailed(key, job, reason, document.run()),
            records.get().jobFailed(key, job, reason).and(document.reservation().release()),
            ChunkResult.Count.REFUSED);
      }
      case BatchAnswers.Unmatched unmatched when halved > 0 && unmatched.billed().isEmpty() -> {
        String why = ended + "; it goes into a job of at most " + halved + ", not counted as a try";
        yield DocumentResult.unanswered(null, records.get().requeued(document, why, document.reruns(), halved),
            ChunkResult.Count.RERUN);
      }
      case BatchAnswers.Unmatched unmatched -> unmatched(job, document, unmatched, ended);
    };
  }

  private DocumentResult answered(String job, RecordQueries.Submitted document, BatchAnswers.Answered answered) {
    IdempotencyKey key = document.documentKey();
    Analysis analysis = answered.result().analysis().orElseThrow();
    long cost = records.get().costMicroUsd(analysis, true).orElse(document.reservation().microUsd());
    return new DocumentResult(ResultMessage.analysed(key, document.source(), analysis, job, document.run()),
        records.get().analysed(key, document.source(), analysis, job, document.run())
            .and(document.reservation().settle(cost)),
        cost, analysis.model(), answered.match(), null);
  }

  private DocumentResult unmatched(String job, RecordQueries.Submitted document, BatchAnswers.Unmatched unmatched,
      String ended) {
    IdempotencyKey key = document.documentKey();
    String why = ended == null ? unmatched.reason() : ended + "; " + unmatched.reason();
    int jobs = document.reruns() + 1;
    Optional<Analysis> billed = unmatched.billed().flatMap(BatchResult::analysis);
    if (jobs >= maxAttempts) {
      List<String> tries = new ArrayList<>(document.tries());
      billed.ifPresent(analysis -> tries.add(job + ": " + why));
      String reason = "gave up after " + jobs + " batch jobs gave it no answer that could be matched to it: " + why
          + (tries.isEmpty() ? "" : "; answers billed to it: " + String.join("; ", tries));
      SideWrites bill = billed.map(analysis -> records.get().unusedAnswerBill(document, why, job, analysis))
          .orElse(SideWrites.NONE);
      long cost = billed.flatMap(analysis -> records.get().costMicroUsd(analysis, true)).orElse(0L);
      return new DocumentResult(ResultMessage.jobFailed(key, job, reason, document.run()),
          records.get().jobFailed(key, job, reason)
              .and(bill)
              .and(billed.isPresent() ? document.reservation().settle(cost) : document.reservation().release()),
          cost, billed.map(Analysis::model).orElse(null), null, ChunkResult.Count.GAVE_UP);
    }
    if (billed.isPresent()) {
      // An answer Google billed that cannot be used: kept on the document with its cost, its reservation settled to
      // it; the next job reserves anew.
      long cost = records.get().costMicroUsd(billed.get(), true).orElse(document.reservation().microUsd());
      return new DocumentResult(null, records.get().requeuedAfterUnusedAnswer(document, why, jobs, job, billed.get())
          .and(document.reservation().settle(cost)), cost, billed.get().model(), null, ChunkResult.Count.RERUN);
    }
    return DocumentResult.unanswered(null, records.get().requeued(document, why, jobs, 0), ChunkResult.Count.RERUN);
  }
}
