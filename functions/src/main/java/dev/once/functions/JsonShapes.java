package dev.once.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.entry.MalformedEvent;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;

/**
 * Checks the JSON types of an event's fields before protobuf's JSON parser reads it: that parser is lenient
 * ({@code "name": ["a"]} becomes {@code "a"}, {@code "bucket": 7} becomes {@code "7"}), and a value of the wrong
 * type is a forged or broken event, not one to guess at.
 */
final class JsonShapes {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonShapes() {}

  static JsonNode object(String json, String what) throws MalformedEvent {
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (IOException e) {
      throw new MalformedEvent(what + " is not JSON");
    }
    if (node == null || !node.isObject()) {
      throw new MalformedEvent(what + " is not a JSON object");
    }
    return node;
  }

  static void strings(JsonNode object, String what, String... fields) throws MalformedEvent {
    for (String field : fields) {
      JsonNode value = object.get(field);
      if (value != null && !value.isNull() && !value.isTextual()) {
        throw new MalformedEvent(what + " field " + field + " is not a string");
      }
    }
  }

  /** int64 fields: GCS sends them as decimal strings; a JSON integer is accepted too. */
  static void integers(JsonNode object, String what, String... fields) throws MalformedEvent {
    for (String field : fields) {
      JsonNode value = object.get(field);
      if (value != null && !value.isNull() && !value.isIntegralNumber()
          && !(value.isTextual() && value.asText().matches("-?\\d{1,19}"))) {
        throw new MalformedEvent(what + " field " + field + " is not an integer");
      }
    }
  }

  static void objectOfStrings(JsonNode object, String what, String field) throws MalformedEvent {
    JsonNode value = object.get(field);
    if (value == null || value.isNull()) {
      return;
    }
    if (!value.isObject()) {
      throw new MalformedEvent(what + " field " + field + " is not an object");
    }
    for (Iterator<Map.Entry<String, JsonNode>> entries = value.fields(); entries.hasNext(); ) {
      if (!entries.next().getValue().isTextual()) {
        throw new MalformedEvent(what + " field " + field + " holds a value that is not a string");
      }
    }
  }
}
