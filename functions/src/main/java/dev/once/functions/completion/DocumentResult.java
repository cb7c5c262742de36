package dev.once.functions.completion;

import dev.once.gemini.BatchAnswers;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.ResultMessage;

/**
 * One document's share of a batch job's completion: its result summary to publish (null: it goes into another job),
 * its writes, what its answer cost (0 without one) and which model gave it, how its answer was matched (null: none
 * was), and what the chunk counts it as (null: nothing).
 */
record DocumentResult(ResultMessage summary, SideWrites writes, long costMicroUsd, String model,
    BatchAnswers.Match match, ChunkResult.Count count) {

  /** A document that got no answer to bill. */
  static DocumentResult unanswered(ResultMessage summary, SideWrites writes, ChunkResult.Count count) {
    return new DocumentResult(summary, writes, 0, null, null, count);
  }
}
