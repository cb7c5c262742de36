package dev.once.functions.completion;

import dev.once.budget.Reservation;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.BatchResult;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What a job's answers given to no document used (Google bills them all the same), recorded in its first chunk's
 * commit: on the gathering, in the day's spend (on the day and counter of a reservation of the chunk), and in the
 * cost its completion logs.
 */
final class UnattributedCost {
  private final Supplier<RecordWrites> records;
  private final Log log;

  UnattributedCost(Supplier<RecordWrites> records, Log log) {
    this.records = records;
    this.log = log;
  }

  /** A chunk's result and writes, with what the job's unattributed answers used added. */
  ChunkCommit addTo(ChunkCommit chunk, JobMembers members, List<RecordQueries.Submitted> documents,
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
    SideWrites writes = chunk.writes();
    if (members.gathering() != null) {
      writes = writes.and(Gatherings.unattributed(members.gathering(), unused.size(), cost, prompt, output));
    }
    Optional<Reservation> day = documents.stream().map(RecordQueries.Submitted::reservation)
        .filter(reservation -> !reservation.none()).findFirst();
    if (day.isPresent() && cost > 0) {
      writes = writes.and(new Reservation(day.get().day(), day.get().shard(), 0).settle(cost));
    }
    log.write("WARNING", "answers of a batch job went to no document", Map.of("job", members.name(),
        "answers", unused.size(), "costMicroUsd", cost));
    return new ChunkCommit(chunk.result().withUnattributed(unused.size(), cost, model), writes);
  }

  /** A chunk's commit: what its record keeps, and what it writes. */
  record ChunkCommit(ChunkResult result, SideWrites writes) {}
}
