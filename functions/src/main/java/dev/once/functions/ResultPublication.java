package dev.once.functions;

import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.ResultMessage;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Publishes results as a guarded effect. Each message carries the document's key as its {@code idempotency_key},
 * so the copy a crash between publishing and recording may cause is recognised downstream.
 */
final class ResultPublication {
  private final Once once;
  private final Supplier<MessagePublisher> publisher;
  private final Supplier<String> topic;

  ResultPublication(Once once, Supplier<MessagePublisher> publisher, Supplier<String> topic) {
    this.once = once;
    this.publisher = publisher;
    this.topic = topic;
  }

  /** One document's result, guarded by the document's key. */
  Outcome publish(IdempotencyKey documentKey, Map<String, Object> summary) {
    return once.run(documentKey, Effects.PUBLISH, attempt -> {
      String id = publisher.get().publish(topic.get(), ResultMessage.json(summary), ResultMessage.attributes(documentKey));
      return Map.of("messageId", id);
    });
  }

  /** The results of a batch job, guarded by the job's key; each message carries its own document's key. */
  Outcome publishAll(IdempotencyKey jobKey, List<Map<String, Object>> summaries) {
    return once.run(jobKey, Effects.PUBLISH, attempt -> {
      for (Map<String, Object> summary : summaries) {
        IdempotencyKey documentKey = IdempotencyKey.of(String.valueOf(summary.get("key")));
        publisher.get().publish(topic.get(), ResultMessage.json(summary), ResultMessage.attributes(documentKey));
      }
      return Map.of("messages", (long) summaries.size());
    });
  }
}
