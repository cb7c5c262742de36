package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.entry.EventEntry;
import dev.once.entry.PubSubMessage;
import dev.once.entry.Report;
import dev.once.functions.completion.CompletionFlow;
import dev.once.functions.webhook.CompletionHandoff;
import dev.once.key.IdempotencyKey;
import dev.once.observe.OutcomeLabel;
import dev.once.observe.Trace;
import dev.once.pipeline.Effects;
import io.cloudevents.CloudEvent;

/**
 * Entry point for {@code google.cloud.pubsub.topic.v1.messagePublished} on the batch completions topic: completes a
 * finished batch job once (see CompletionFlow), as the webhook handed it off. A job not finished yet, one another
 * delivery is completing, and any transient failure throw, so Eventarc redelivers (with the trigger's backoff, then
 * the dead-letter topic; the reconciler completes what is left). The trace is the webhook delivery's.
 */
public final class BatchCompleted implements CloudEventsFunction {
  static final String NAME = "BatchCompleted";
  private final EventEntry<PubSubMessage> entry;

  public BatchCompleted() {
    this(Clients.instance());
  }

  BatchCompleted(Clients clients) {
    CompletionFlow flow = Wiring.completionFlow(clients);
    entry = EventEntry.of(NAME, PubSubMessage::from, CompletionHandoff::jobKey,
        (message, jobKey) -> complete(flow, jobKey))
        .tracedBy((message, event) -> Trace.fromTraceparent(message.attributes().get(Trace.TRACEPARENT)));
  }

  /** A job Gemini has not finished yet is logged as in flight, not failed: it is redelivered all the same. */
  private static Report complete(CompletionFlow flow, IdempotencyKey jobKey) {
    try {
      return flow.complete(jobKey);
    } catch (CompletionFlow.NotFinished e) {
      return Report.of(jobKey, Effects.COMPLETE, OutcomeLabel.IN_FLIGHT, 0).with("reason", e.getMessage());
    }
  }

  @Override
  public void accept(CloudEvent event) {
    entry.accept(event);
  }
}
