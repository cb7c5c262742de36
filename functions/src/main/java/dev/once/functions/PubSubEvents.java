package dev.once.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.events.cloud.pubsub.v1.MessagePublishedData;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.cloudevents.CloudEvent;
import java.util.Map;

/** Reads a Pub/Sub "message published" CloudEvent into the message it carries, or says why it cannot. */
final class PubSubEvents {
  static final String PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished";
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

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
    JsonShapes.strings(carried, what + " message", "data", "messageId", "message_id", "publishTime", "orderingKey");
    JsonShapes.objectOfStrings(carried, what + " message", "attributes");
    MessagePublishedData.Builder data = MessagePublishedData.newBuilder();
    try {
      PARSER.merge(json, data);
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
}
