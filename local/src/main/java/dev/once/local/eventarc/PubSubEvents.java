package dev.once.local.eventarc;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.util.Timestamps;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.http.Json;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

/**
 * A Pub/Sub message as the CloudEvent Eventarc delivers: {@code ce-id} the message id, {@code ce-source}
 * {@code //pubsub.googleapis.com/} + the topic, {@code ce-time} the publish time, no subject, and as data the push
 * envelope exactly as Pub/Sub writes it — {@code {"message":{"attributes","data","messageId","message_id",
 * "publishTime","publish_time","orderingKey"},"subscription"}}, with the snake_case twins of the id and the time
 * (googleapis/google-cloudevents issue 151 captured such a delivery; the Pub/Sub push format documents both),
 * {@code attributes} only when the message has some, {@code data} only when it is not empty and
 * {@code orderingKey} only when set. Protobuf's strict JSON parser refuses this shape (a field set twice), which
 * is why the functions must not use it as is.
 */
public final class PubSubEvents {
  private PubSubEvents() {}

  public static CloudEvent messagePublished(PubsubMessage message, String subscription, String topic) {
    Instant published = Instant.ofEpochSecond(message.getPublishTime().getSeconds(), message.getPublishTime().getNanos());
    String publishTime = Timestamps.toString(message.getPublishTime()); // RFC 3339, as proto3 JSON writes it
    ObjectNode envelope = Json.object();
    ObjectNode body = envelope.putObject("message");
    if (message.getAttributesCount() > 0) {
      ObjectNode attributes = body.putObject("attributes");
      message.getAttributesMap().forEach(attributes::put);
    }
    if (!message.getData().isEmpty()) {
      body.put("data", Base64.getEncoder().encodeToString(message.getData().toByteArray()));
    }
    body.put("messageId", message.getMessageId());
    body.put("message_id", message.getMessageId());
    body.put("publishTime", publishTime);
    body.put("publish_time", publishTime);
    if (!message.getOrderingKey().isEmpty()) {
      body.put("orderingKey", message.getOrderingKey());
    }
    envelope.put("subscription", subscription);
    return new CloudEvent(message.getMessageId(), "//pubsub.googleapis.com/" + topic, CloudEvent.PUBSUB_PUBLISHED,
        null, published, "application/json", Json.bytes(envelope), Map.of());
  }
}
