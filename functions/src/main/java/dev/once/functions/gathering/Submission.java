package dev.once.functions.gathering;

import dev.once.ledger.ResultCodec;
import java.util.Map;
import java.util.Optional;

/**
 * What a gathering's submission records: the job made for it (none: its documents went elsewhere, or all were
 * refused) and how many documents it holds.
 */
record Submission(String gathering, Optional<String> job, int documents) {
  static final ResultCodec<Submission> CODEC = new ResultCodec<>() {
    public Map<String, Object> encode(Submission made) {
      return made.job().<Map<String, Object>>map(
          job -> Map.of("gathering", made.gathering(), "job", job, "documents", made.documents()))
          .orElseGet(() -> Map.of("gathering", made.gathering(), "documents", made.documents()));
    }

    public Submission decode(Map<String, Object> fields) {
      return new Submission(String.valueOf(fields.get("gathering")),
          fields.get("job") instanceof String job ? Optional.of(job) : Optional.empty(),
          fields.get("documents") instanceof Number n ? n.intValue() : 0);
    }
  };

  static Submission none(String gathering) {
    return new Submission(gathering, Optional.empty(), 0);
  }
}
