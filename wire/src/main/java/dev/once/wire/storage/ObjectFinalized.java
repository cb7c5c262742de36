package dev.once.wire.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
import java.time.Instant;

/**
 * One {@code object.finalize} notification: a fresh event id (a doubled notification carries another one),
 * and the object resource JSON exactly as the JSON API returns it.
 *
 * <p>{@link #toJson()} is the wire form the stand-in POSTs to a notification URL (the Eventarc relay's ingest
 * endpoint when the two run as separate processes): {@code {"eventId","eventType":"OBJECT_FINALIZE",
 * "eventTime","bucket","name","generation","object":{...}}}.
 */
public record ObjectFinalized(
    String eventId, Instant eventTime, String bucket, String name, long generation, String objectJson) {

  public static final String EVENT_TYPE = "OBJECT_FINALIZE";

  public JsonNode object() {
    return Json.parseTrusted(objectJson);
  }

  public String toJson() {
    ObjectNode node = Json.object();
    node.put("eventId", eventId);
    node.put("eventType", EVENT_TYPE);
    node.put("eventTime", ObjectResource.time(eventTime));
    node.put("bucket", bucket);
    node.put("name", name);
    node.put("generation", Long.toString(generation));
    node.set("object", object());
    return Json.text(node);
  }

  /** Reads the wire form; anything else is an {@link IllegalArgumentException} naming what is missing. */
  public static ObjectFinalized fromJson(JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("a finalize notification is a JSON object");
    }
    if (!EVENT_TYPE.equals(node.path("eventType").asText())) {
      throw new IllegalArgumentException("eventType must be " + EVENT_TYPE);
    }
    String eventId = required(node, "eventId");
    String bucket = required(node, "bucket");
    String name = required(node, "name");
    long generation;
    Instant time;
    try {
      generation = Long.parseLong(required(node, "generation"));
      time = Instant.parse(required(node, "eventTime"));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("generation must be an int64 and eventTime RFC 3339: " + e.getMessage());
    }
    JsonNode object = node.get("object");
    if (object == null || !object.isObject()) {
      throw new IllegalArgumentException("object must be the object resource");
    }
    return new ObjectFinalized(eventId, time, bucket, name, generation, Json.text(object));
  }

  private static String required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual() || value.asText().isEmpty()) {
      throw new IllegalArgumentException(field + " is required");
    }
    return value.asText();
  }
}
