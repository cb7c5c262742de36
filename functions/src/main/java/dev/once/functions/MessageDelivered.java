package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.entry.EventEntry;
import dev.once.entry.MalformedEvent;
import dev.once.entry.PubSubMessage;
import dev.once.functions.delivery.DeliveryFlow;
import dev.once.observe.Trace;
import dev.once.pipeline.ResultSignature;
import io.cloudevents.CloudEvent;

/**
 * Entry point for {@code google.cloud.pubsub.topic.v1.messagePublished} on the results topic: notify once (see
 * DeliveryFlow) each result the pipeline signed ({@link ResultSignature}). The trace is the one the result was published under, so one document's lines join up.
 */
public final class MessageDelivered implements CloudEventsFunction {
  static final String NAME = "MessageDelivered";
  private final EventEntry<PubSubMessage> entry;

  public MessageDelivered() {
    this(Clients.instance());
  }

  MessageDelivered(Clients clients) {
    entry = entry(Wiring.deliveryFlow(clients), Wiring.resultSignature(clients));
  }

  /** Parse, check the signature, key, deliver; traced by the trace the result was published under. */
  static EventEntry<PubSubMessage> entry(DeliveryFlow flow, ResultSignature signature) {
    return EventEntry.of(NAME, event -> signed(PubSubMessage.from(event), signature), DeliveryFlow::key, flow::deliver)
        .tracedBy((message, event) -> Trace.fromTraceparent(message.attributes().get(Trace.TRACEPARENT)));
  }

  @Override
  public void accept(CloudEvent event) {
    entry.accept(event);
  }

  /**
   * Only a result this pipeline published is delivered. Anything else is refused here, before its key reaches the
   * ledger: logged and acknowledged, so a forged message that names a real document's key neither is notified nor
   * claims that key ahead of the real result.
   */
  static PubSubMessage signed(PubSubMessage message, ResultSignature signature) throws MalformedEvent {
    if (!signature.verifies(message.attributes(), message.data())) {
      throw new MalformedEvent("message " + message.messageId() + " is not a result of this pipeline: it carries no "
          + ResultSignature.ATTRIBUTE + " that RESULTS_SIGNING_KEY verifies");
    }
    return message;
  }
}
