package dev.once.wire.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** One shared Jackson mapper, with limits that let a 20 MB base64 part through but stop absurd nesting. */
public final class Json {
  public static final ObjectMapper MAPPER =
      new ObjectMapper(
          JsonFactory.builder()
              .streamReadConstraints(
                  StreamReadConstraints.builder().maxStringLength(128_000_000).maxNestingDepth(200).build())
              .build());

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static ArrayNode array() {
    return MAPPER.createArrayNode();
  }

  public static byte[] bytes(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree could not be written", e);
    }
  }

  public static String text(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree could not be written", e);
    }
  }

  /** Parses a request body; anything that is not one JSON value is a 400 with the parser's reason. */
  public static JsonNode parse(byte[] body) {
    try {
      JsonNode node = MAPPER.readTree(body);
      if (node == null || node.isMissingNode()) {
        throw HttpError.badRequest("parseError", "Invalid JSON payload received. Empty body.");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw HttpError.badRequest("parseError", "Invalid JSON payload received. " + e.getOriginalMessage());
    } catch (IOException e) {
      throw HttpError.badRequest("parseError", "Invalid JSON payload received.");
    }
  }

  /** Parses text the stand-in wrote itself (files, feeds); a failure here is a bug, not bad input. */
  public static JsonNode parseTrusted(String text) {
    try {
      return MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
    }
  }
}
