package dev.once.functions.analysis;

import dev.once.ledger.ResultCodec;
import dev.once.pipeline.ResultMessage;
import java.util.Map;
import java.util.Optional;

/**
 * What the {@code analyse} effect records: in batch mode the document {@link Queued} for a job (records of older
 * versions: the job made for it alone), not an analysis, which comes with the job's completion; otherwise the
 * document's result to publish (a sync analysis, a copy of earlier bytes, in either mode).
 */
sealed interface AnalyseResult {
  /** Queued (or, as an older version recorded it, submitted alone): its result comes with its job's completion. */
  record Queued() implements AnalyseResult {}

  /** The document's result, published under its own key. */
  record ToPublish(ResultMessage message) implements AnalyseResult {}

  Queued QUEUED = new Queued();

  ResultCodec<AnalyseResult> CODEC = new ResultCodec<>() {
    private static final Map<String, Object> QUEUED_FIELDS = Map.of("queued", true, "mode", "batch");

    public Map<String, Object> encode(AnalyseResult result) {
      return switch (result) {
        case Queued queued -> QUEUED_FIELDS;
        case ToPublish published -> ResultMessage.CODEC.encode(published.message());
      };
    }

    /** A result always has a status; a queued document's record has {@code queued}, an older one {@code job}. */
    public AnalyseResult decode(Map<String, Object> fields) {
      return fields.containsKey("queued") || fields.containsKey("job") && !fields.containsKey("status") ? QUEUED
          : new ToPublish(ResultMessage.CODEC.decode(fields));
    }
  };

  /** The result to publish, if this is one. */
  default Optional<ResultMessage> toPublish() {
    return this instanceof ToPublish published ? Optional.of(published.message()) : Optional.empty();
  }
}
