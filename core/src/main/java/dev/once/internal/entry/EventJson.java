package dev.once.internal.entry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.entry.MalformedEvent;
import dev.once.observe.ForeignText;
import io.cloudevents.CloudEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * An event's data as JSON, its fields' JSON types checked before protobuf's JSON parser reads it: that parser is
 * lenient ({@code "name": ["a"]} becomes {@code "a"}, {@code "bucket": 7} becomes {@code "7"}), and a value of the
 * wrong type is a forged or broken event, not one to guess at.
 */
public final class EventJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private EventJson() {}

  /** The event's data as text; bytes that are not UTF-8 make the event malformed rather than silently replaced. */
  public static String utf8(CloudEvent event) throws MalformedEvent {
    if (event.getData() == null) {
      throw new MalformedEvent("event " + event.getId() + " has no data");
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(event.getData().toBytes()))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedEvent("event " + event.getId() + " data is not UTF-8");
    }
  }

  public static JsonNode object(String json, String what) throws MalformedEvent {
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

  public static void strings(JsonNode object, String what, String... fields) throws MalformedEvent {
    for (String field : fields) {
      JsonNode value = object.get(field);
      if (value != null && !value.isNull() && !value.isTextual()) {
        throw new MalformedEvent(what + " field " + field + " is not a string");
      }
    }
  }

  /** int64 fields: GCS sends them as decimal strings; a JSON integer is accepted too. */
  public static void integers(JsonNode object, String what, String... fields) throws MalformedEvent {
    for (String field : fields) {
      JsonNode value = object.get(field);
      if (value != null && !value.isNull() && !value.isIntegralNumber()
          && !(value.isTextual() && value.asText().matches("-?\\d{1,19}"))) {
        throw new MalformedEvent(what + " field " + field + " is not an integer");
      }
    }
  }

  public static void objectOfStrings(JsonNode object, String what, String field) throws MalformedEvent {
    JsonNode value = object.get(field);
    if (value == null || value.isNull()) {
      return;
    }
    if (!value.isObject()) {
      throw new MalformedEvent(what + " field " + field + " is not an object");
    }
    for (Iterator<Map.Entry<String, JsonNode>> entries = value.fields(); entries.hasNext();) {
      if (!entries.next().getValue().isTextual()) {
        throw new MalformedEvent(what + " field " + field + " holds a value that is not a string");
      }
    }
  }

  /** The first line of a parser's message, at most 200 characters: what a refusal quotes. */
  public static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    String line = message.lines().findFirst().orElse("");
    return ForeignText.cut(line, 200);
  }
}
