package dev.once.wire.eventarc;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
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
 *
 * <p>The message comes as its parts rather than as the Pub/Sub client's {@code PubsubMessage}, so that this module
 * needs no Google Cloud client: the stand-ins' relay passes the fields of the message it pulled, the test kit those of
 * the message it makes up.
 */
public final class PubSubEvents {
  private PubSubEvents() {}

  /**
   * The event of one message. {@code published} is its publish time, written as proto3 JSON writes a Timestamp (RFC
   * 3339 in UTC, with 0, 3, 6 or 9 digits of fraction, what {@link Instant#toString()} writes too); {@code attributes}
   * keep their order; an empty {@code data} or {@code orderingKey} (or a null one) is left out as Pub/Sub leaves it.
   */
  public static CloudEvent messagePublished(String messageId, Map<String, String> attributes, byte[] data,
      String orderingKey, Instant published, String subscription, String topic) {
    String publishTime = published.toString();
    ObjectNode envelope = Json.object();
    ObjectNode body = envelope.putObject("message");
    if (!attributes.isEmpty()) {
      ObjectNode attributeNode = body.putObject("attributes");
      attributes.forEach(attributeNode::put);
    }
    if (data != null && data.length > 0) {
      body.put("data", Base64.getEncoder().encodeToString(data));
    }
    body.put("messageId", messageId);
    body.put("message_id", messageId);
    body.put("publishTime", publishTime);
    body.put("publish_time", publishTime);
    if (orderingKey != null && !orderingKey.isEmpty()) {
      body.put("orderingKey", orderingKey);
    }
    envelope.put("subscription", subscription);
    return new CloudEvent(messageId, "//pubsub.googleapis.com/" + topic, CloudEvent.PUBSUB_PUBLISHED,
        null, published, "application/json", Json.bytes(envelope), Map.of());
  }
}
