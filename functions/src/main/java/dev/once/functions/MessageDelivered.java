package dev.once.functions;

import dev.once.pipeline.PipelineSetting;
import com.google.cloud.functions.CloudEventsFunction;
import dev.once.pipeline.Notifier;
import dev.once.key.InvalidKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.observe.EventLog;
import io.cloudevents.CloudEvent;
import java.net.URI;
import java.util.Map;

/**
 * Entry point for {@code google.cloud.pubsub.topic.v1.messagePublished} on the results topic: notify once. A
 * malformed event is logged and acknowledged without a ledger write; a transient failure or another delivery in
 * flight is thrown, so the platform redelivers.
 */
public final class MessageDelivered implements CloudEventsFunction {
  static final String NAME = "MessageDelivered";
  private static final Lazy<DeliveryFlow> FLOW = Lazy.of(() -> wire(Clients.instance()));

  static DeliveryFlow wire(Clients clients) {
    Lazy<Notifier> notifier = Lazy.of(() -> {
      URI endpoint;
      try {
        endpoint = URI.create(clients.settings.required(PipelineSetting.NOTIFY_URL));
      } catch (IllegalArgumentException e) {
        throw new dev.once.config.MissingSetting("NOTIFY_URL is not a URL: " + e.getMessage());
      }
      return new Notifier(endpoint, clients.settings.seconds(PipelineSetting.NOTIFY_TIMEOUT_SECONDS));
    });
    return new DeliveryFlow(clients.once.get(), notifier, clients.publisher,
        Lazy.of(() -> clients.topic(PipelineSetting.DEAD_LETTER_TOPIC)));
  }

  @Override
  public void accept(CloudEvent event) {
    long started = System.nanoTime();
    PubSubEvents.Message message;
    try {
      message = PubSubEvents.read(event);
    } catch (MalformedEvent e) {
      EventLog.refused(NAME, e.getMessage(), started, "eventId", String.valueOf(event.getId()));
      return;
    }
    EventReport report;
    try {
      report = FLOW.get().deliver(message);
    } catch (InvalidKey e) {
      EventLog.refused(NAME, e.getMessage(), started, "messageId", message.messageId());
      return;
    } catch (RuntimeException e) {
      EventLog.record(NAME, message.attributes().get(PubSubMessageKeys.ATTRIBUTE), "none", EventLog.FAILED, 0,
          EventLog.elapsedMs(started), Map.of("error", String.valueOf(e), "messageId", message.messageId()));
      throw e;
    }
    EventLog.record(NAME, report.key(), report.effect(), report.outcome(), report.attempts(),
        EventLog.elapsedMs(started), Map.of("effects", report.effects(), "messageId", message.messageId()));
    if (report.inFlight()) {
      throw new Redeliver(report.key() + " is being notified by another delivery; redeliver later");
    }
  }
}
