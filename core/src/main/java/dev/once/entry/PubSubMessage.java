package dev.once.entry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.events.cloud.pubsub.v1.MessagePublishedData;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.once.internal.entry.EventJson;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.observe.Log;
import io.cloudevents.CloudEvent;
import java.util.List;
import java.util.Map;

/**
 * The message a Pub/Sub "message published" CloudEvent carries, as Eventarc delivers it.
 *
 * <p>Eventarc's Pub/Sub events carry {@code message_id} and {@code publish_time} beside {@code messageId} and
 * {@code publishTime} (the push format sends both spellings; googleapis/google-cloudevents issue 151 shows a captured
 * event, kept in once-testing's samples). Protobuf's JSON parser accepts either spelling but refuses both at once,
 * so the snake_case twin is dropped before parsing. When twins disagree, which no real delivery does, the camelCase
 * field wins — it is the {@code MessagePublishedData} JSON name the schema documents — and the disagreement is
 * logged as a warning: the event is still delivered, since refusing it would acknowledge and lose it.
 *
 * @param data the message's bytes (base64-decoded)
 */
public record PubSubMessage(String messageId, byte[] data, Map<String, String> attributes) {
  /** The CloudEvent type of a published message. */
  public static final String PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished";
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();
  /** Pairs of (snake_case, camelCase) spellings of one field of a message. */
  private static final List<List<String>> TWINS = List.of(
      List.of("message_id", "messageId"), List.of("publish_time", "publishTime"),
      List.of("ordering_key", "orderingKey"));

  public PubSubMessage {
    attributes = Map.copyOf(attributes);
  }

  /** The message the event carries, or why no delivery of it can be processed. */
  public static PubSubMessage from(CloudEvent event) throws MalformedEvent {
    if (!PUBLISHED.equals(event.getType())) {
      throw new MalformedEvent("event type " + event.getType() + " is not " + PUBLISHED);
    }
    String json = EventJson.utf8(event);
    String what = "event " + event.getId() + " data";
    JsonNode shape = EventJson.object(json, what);
    EventJson.strings(shape, what, "subscription");
    JsonNode carried = shape.get("message");
    if (carried == null || !carried.isObject()) {
      throw new MalformedEvent("event " + event.getId() + " carries no message object");
    }
    EventJson.strings(carried, what + " message", "data", "messageId", "message_id", "publishTime", "publish_time",
        "orderingKey", "ordering_key");
    EventJson.objectOfStrings(carried, what + " message", "attributes");
    foldTwins((ObjectNode) carried, event.getId());
    MessagePublishedData.Builder data = MessagePublishedData.newBuilder();
    try {
      PARSER.merge(shape.toString(), data);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw new MalformedEvent(
          "event " + event.getId() + " data is not a Pub/Sub message: " + EventJson.firstLine(e.getMessage()));
    }
    if (!data.hasMessage()) {
      throw new MalformedEvent("event " + event.getId() + " carries no message");
    }
    var message = data.getMessage();
    return new PubSubMessage(message.getMessageId(), message.getData().toByteArray(), message.getAttributesMap());
  }

  /**
   * The producer's key, its {@value PubSubMessageKeys#ATTRIBUTE} attribute, else {@code pubsub:} and the message id
   * (which Pub/Sub keeps across redeliveries of the one message).
   */
  public IdempotencyKey key() {
    return PubSubMessageKeys.of(attributes, messageId);
  }

  /** Leaves one spelling of each twinned field: the camelCase one when both are there. */
  private static void foldTwins(ObjectNode message, String eventId) {
    for (List<String> twin : TWINS) {
      JsonNode snake = message.get(twin.get(0));
      JsonNode camel = message.get(twin.get(1));
      if (snake == null || camel == null) {
        continue;
      }
      if (!snake.equals(camel)) {
        Log.stdout().write("WARNING", "Pub/Sub event whose twin fields disagree: " + twin.get(1) + " is used",
            Map.of("eventId", String.valueOf(eventId), twin.get(0), EventJson.firstLine(snake.asText()),
                twin.get(1), EventJson.firstLine(camel.asText())));
      }
      message.remove(twin.get(0));
    }
  }
}
