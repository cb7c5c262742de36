package dev.once.functions.gathering;

import dev.once.budget.Budget;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiErrors;
import dev.once.guard.Refusal;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * A gathering's members as its job's requests: each read from Cloud Storage, or refused before the job is made (gone,
 * grown past the bound, empty); under a daily budget, a member holding no reservation reserves again or waits.
 */
final class JobRequests {
  private final Supplier<RecordWrites> records;
  private final Supplier<DocumentReader> reader;
  private final long maxDocumentBytes;
  private final Budget budget;
  private final Supplier<CostEstimator> estimator;

  JobRequests(Supplier<RecordWrites> records, Supplier<DocumentReader> reader, long maxDocumentBytes, Budget budget,
      Supplier<CostEstimator> estimator) {
    this.records = records;
    this.reader = reader;
    this.maxDocumentBytes = maxDocumentBytes;
    this.budget = budget;
    this.estimator = estimator;
  }

  /**
   * Why a member is refused before its job is made: the words its analysis and its result carry, and the kind of it
   * in a word or two, which its gathering keeps.
   */
  record Refused(String reason, String kind) {
    static final String BY_GEMINI = "refused by Gemini";
  }

  /** Adds the member's request; returns why it is refused instead (gone, or grown), or throws to try later. */
  Refused read(String id, RecordQueries.Submitted member, List<BatchJobs.Request> requests) {
    try {
      byte[] content = reader.get().read(member.source(), maxDocumentBytes);
      if (content.length == 0) {
        return new Refused("the document is empty", "empty");
      }
      requests.add(BatchJobs.Request.of(id, member.documentKey(), content, member.source().mimeType()));
      return null;
    } catch (DocumentReader.Gone e) {
      return new Refused(e.getMessage(), "gone");
    } catch (DocumentReader.TooLarge e) {
      return new Refused(e.getMessage(), "too large");
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not read " + member.documentKey().value() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Whether the member may go into the job: with a daily budget, a member holding no reservation (its last one was
   * settled to an answer Google billed that could not be used) reserves as its first queueing did — the model's
   * ceiling far from the day's edge, else its counted tokens — recorded in the submission's commit, which the job's
   * completion settles. Refused today, it goes back to the queue (not counted as a try) and waits for the budget.
   */
  boolean reserved(RecordQueries.Submitted member, BatchJobs.Request request, List<SideWrites> writes) {
    if (!budget.capped() || !member.reservation().none()) {
      return true;
    }
    try {
      OptionalLong ceiling = estimator.get().ceiling(true);
      long estimate = ceiling.isPresent() && budget.farFromTheEdge(ceiling.getAsLong()) ? ceiling.getAsLong()
          : estimator.get().microUsd(request.content(), request.mimeType(), true);
      writes.add(records.get().reserved(member.documentKey(),
          budget.reserve(member.documentKey(), estimate, reason -> SideWrites.NONE)));
      return true;
    } catch (Refusal e) {
      if (!e.is(Refusal.Kind.DEFERRED)) {
        throw e;
      }
      writes.add(records.get().requeued(member, "waiting for the day's budget to run it again: " + e.getMessage(),
          member.reruns(), 0));
      return false;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not estimate what running " + member.documentKey().logHash()
          + " again costs: " + GeminiErrors.describe(e), e);
    }
  }
}
