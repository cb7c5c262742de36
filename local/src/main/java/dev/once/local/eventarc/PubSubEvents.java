package dev.once.local.eventarc;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.http.Json;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

/**
 * A Pub/Sub message as the CloudEvent Eventarc delivers: the push envelope
 * {@code {"message":{"data","attributes","messageId","publishTime"},"subscription"}} as data (the Java invoker
 * does not accept the raw push body), {@code ce-id} the message id, {@code ce-source} the topic.
 */
final class PubSubEvents {
  private PubSubEvents() {}

  static CloudEvent messagePublished(PubsubMessage message, String subscription, String topic) {
    Instant published = Instant.ofEpochSecond(message.getPublishTime().getSeconds(), message.getPublishTime().getNanos());
    ObjectNode envelope = Json.object();
    ObjectNode body = envelope.putObject("message");
    if (!message.getData().isEmpty()) {
      body.put("data", Base64.getEncoder().encodeToString(message.getData().toByteArray()));
    }
    ObjectNode attributes = body.putObject("attributes");
    message.getAttributesMap().forEach(attributes::put);
    body.put("messageId", message.getMessageId());
    body.put("publishTime", published.toString());
    if (!message.getOrderingKey().isEmpty()) {
      body.put("orderingKey", message.getOrderingKey());
    }
    envelope.put("subscription", subscription);
    return new CloudEvent(message.getMessageId(), "//pubsub.googleapis.com/" + topic, CloudEvent.PUBSUB_PUBLISHED,
        null, published, "application/json", Json.bytes(envelope), Map.of());
  }
}
