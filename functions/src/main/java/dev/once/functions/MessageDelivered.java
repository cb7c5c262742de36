package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.entry.EventEntry;
import dev.once.entry.PubSubMessage;
import dev.once.observe.Trace;
import io.cloudevents.CloudEvent;

/**
 * Entry point for {@code google.cloud.pubsub.topic.v1.messagePublished} on the results topic: notify once (see
 * DeliveryFlow). The trace is the one the result was published under, so one document's lines join up.
 */
public final class MessageDelivered implements CloudEventsFunction {
  static final String NAME = "MessageDelivered";
  private final EventEntry<PubSubMessage> entry;

  public MessageDelivered() {
    this(Clients.instance());
  }

  MessageDelivered(Clients clients) {
    DeliveryFlow flow = Wiring.deliveryFlow(clients);
    entry = EventEntry.of(NAME, PubSubMessage::from, DeliveryFlow::key, flow::deliver)
        .tracedBy((message, event) -> Trace.fromTraceparent(message.attributes().get(Trace.TRACEPARENT)));
  }

  @Override
  public void accept(CloudEvent event) {
    entry.accept(event);
  }
}
