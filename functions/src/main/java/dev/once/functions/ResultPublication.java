package dev.once.functions;

import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.internal.ledger.Claim;
import dev.once.internal.observe.Trace;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.ResultMessage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Publishes results as a guarded effect. Each message carries the document's key as its {@code idempotency_key},
 * so the copy a crash between publishing and recording may cause is recognised downstream, and the trace it was
 * published under, so the notification's log lines join the document's. The lease must outlast the publish before
 * it starts.
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

  /** One document's result, guarded by the document's key; on {@code held} when an earlier commit claimed it. */
  Outcome publish(IdempotencyKey documentKey, Map<String, Object> summary, Optional<Claim> held) {
    Once.Effect effect = attempt -> Completion.of(Map.of("messageId", send(attempt, documentKey, summary)));
    return held.map(claim -> once.runHeld(claim, effect)).orElseGet(() -> once.run(documentKey, Effects.PUBLISH, effect));
  }

  Outcome publish(IdempotencyKey documentKey, Map<String, Object> summary) {
    return publish(documentKey, summary, Optional.empty());
  }

  /** The results of a batch job, guarded by the job's key; each message carries its own document's key. */
  Outcome publishAll(IdempotencyKey jobKey, List<Map<String, Object>> summaries, Optional<Claim> held) {
    Once.Effect effect = attempt -> {
      for (Map<String, Object> summary : summaries) {
        send(attempt, IdempotencyKey.of(String.valueOf(summary.get("key"))), summary);
      }
      return Completion.of(Map.of("messages", (long) summaries.size()));
    };
    return held.map(claim -> once.runHeld(claim, effect)).orElseGet(() -> once.run(jobKey, Effects.PUBLISH, effect));
  }

  private String send(Attempt attempt, IdempotencyKey documentKey, Map<String, Object> summary) {
    attempt.ensureLease(MessagePublisher.TIMEOUT);
    Map<String, String> attributes = new HashMap<>(ResultMessage.attributes(documentKey));
    Trace.current().ifPresent(trace -> attributes.put(Trace.TRACEPARENT, trace.traceparent()));
    return publisher.get().publish(topic.get(), ResultMessage.json(summary), attributes);
  }
}
