package dev.once.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.events.cloud.pubsub.v1.MessagePublishedData;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.once.entry.MalformedEvent;
import dev.once.observe.Log;
import io.cloudevents.CloudEvent;
import java.util.List;
import java.util.Map;

/**
 * Reads a Pub/Sub "message published" CloudEvent into the message it carries, or says why it cannot.
 *
 * <p>Eventarc's Pub/Sub events carry {@code message_id} and {@code publish_time} beside {@code messageId} and
 * {@code publishTime} (the push format sends both spellings; googleapis/google-cloudevents issue 151 shows a captured
 * event). Protobuf's JSON parser accepts either spelling but refuses both at once, so the snake_case twin is dropped
 * before parsing. When twins disagree, which no real delivery does, the camelCase field wins — it is the
 * {@code MessagePublishedData} JSON name the schema documents — and the disagreement is logged as a warning: the
 * event is still delivered, since refusing it would acknowledge and lose it.
 */
final class PubSubEvents {
  static final String PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished";
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

  /** Pairs of (snake_case, camelCase) spellings of one field of a message. */
  private static final List<List<String>> TWINS = List.of(
      List.of("message_id", "messageId"), List.of("publish_time", "publishTime"), List.of("ordering_key", "orderingKey"));

  /** One delivered message. */
  record Message(String messageId, byte[] data, Map<String, String> attributes) {}

  private PubSubEvents() {}

  static Message read(CloudEvent event) throws MalformedEvent {
    if (!PUBLISHED.equals(event.getType())) {
      throw new MalformedEvent("event type " + event.getType() + " is not " + PUBLISHED);
    }
    if (event.getData() == null) {
      throw new MalformedEvent("event " + event.getId() + " has no data");
    }
    String json = StorageEvents.utf8(event);
    String what = "event " + event.getId() + " data";
    JsonNode shape = JsonShapes.object(json, what);
    JsonShapes.strings(shape, what, "subscription");
    JsonNode carried = shape.get("message");
    if (carried == null || !carried.isObject()) {
      throw new MalformedEvent("event " + event.getId() + " carries no message object");
    }
    JsonShapes.strings(carried, what + " message", "data", "messageId", "message_id", "publishTime", "publish_time",
        "orderingKey", "ordering_key");
    JsonShapes.objectOfStrings(carried, what + " message", "attributes");
    foldTwins((ObjectNode) carried, event.getId());
    MessagePublishedData.Builder data = MessagePublishedData.newBuilder();
    try {
      PARSER.merge(shape.toString(), data);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw new MalformedEvent(
          "event " + event.getId() + " data is not a Pub/Sub message: " + StorageEvents.firstLine(e.getMessage()));
    }
    if (!data.hasMessage()) {
      throw new MalformedEvent("event " + event.getId() + " carries no message");
    }
    var message = data.getMessage();
    return new Message(message.getMessageId(), message.getData().toByteArray(), message.getAttributesMap());
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
            Map.of("function", MessageDelivered.NAME, "eventId", String.valueOf(eventId),
                twin.get(0), StorageEvents.firstLine(snake.asText()), twin.get(1), StorageEvents.firstLine(camel.asText())));
      }
      message.remove(twin.get(0));
    }
  }
}
