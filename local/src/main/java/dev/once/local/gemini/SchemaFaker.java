package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;

/**
 * Fills a response schema with deterministic values: the same seed (derived from the request) gives the same
 * JSON, and the JSON validates against the schema. Reads both schema dialects the API accepts:
 * {@code responseSchema} (OpenAPI subset, {@code "type":"OBJECT"}) and {@code responseJsonSchema} (JSON Schema,
 * {@code "type":"object"}, type arrays, {@code $ref} into {@code $defs}).
 */
final class SchemaFaker {
  private static final int MAX_DEPTH = 12;
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final JsonNode root;
  private final Random random;

  private SchemaFaker(JsonNode root, long seed) {
    this.root = root;
    this.random = new Random(seed);
  }

  static JsonNode fake(JsonNode schema, long seed) {
    SchemaFaker faker = new SchemaFaker(schema, seed);
    return faker.value(schema, "value", 0);
  }

  private JsonNode value(JsonNode schema, String name, int depth) {
    if (schema == null || !schema.isObject() || depth > MAX_DEPTH) {
      return NODES.nullNode();
    }
    if (schema.has("$ref")) {
      return value(resolve(schema.get("$ref").asText()), name, depth + 1);
    }
    if (schema.has("const")) {
      return schema.get("const");
    }
    JsonNode enumValues = schema.get("enum");
    if (enumValues != null && enumValues.isArray() && !enumValues.isEmpty()) {
      return enumValues.get(random.nextInt(enumValues.size()));
    }
    for (String alternatives : List.of("anyOf", "oneOf")) {
      JsonNode options = schema.get(alternatives);
      if (options != null && options.isArray() && !options.isEmpty()) {
        return value(nonNullOption(options), name, depth + 1);
      }
    }
    JsonNode allOf = schema.get("allOf");
    if (allOf != null && allOf.isArray() && !allOf.isEmpty()) {
      return value(allOf.get(0), name, depth + 1);
    }
    return switch (type(schema)) {
      case "object" -> object(schema, depth);
      case "array" -> array(schema, name, depth);
      case "integer" -> NODES.numberNode(integer(schema));
      case "number" -> NODES.numberNode(number(schema));
      case "boolean" -> NODES.booleanNode(random.nextBoolean());
      case "null" -> NODES.nullNode();
      default -> NODES.textNode(string(schema, name));
    };
  }

  private JsonNode nonNullOption(JsonNode options) {
    for (JsonNode option : options) {
      if (!"null".equals(type(option))) {
        return option;
      }
    }
    return options.get(0);
  }

  /** The schema's type in lower case; a type array picks its first non-null entry; no type is inferred. */
  private static String type(JsonNode schema) {
    JsonNode type = schema.get("type");
    if (type != null && type.isArray()) {
      for (JsonNode t : type) {
        if (!"null".equalsIgnoreCase(t.asText())) {
          return t.asText().toLowerCase(Locale.ROOT);
        }
      }
      return "null";
    }
    if (type != null && type.isTextual() && !type.asText().equals("TYPE_UNSPECIFIED")) {
      return type.asText().toLowerCase(Locale.ROOT);
    }
    if (schema.has("properties")) {
      return "object";
    }
    if (schema.has("items")) {
      return "array";
    }
    return "string";
  }

  private JsonNode object(JsonNode schema, int depth) {
    ObjectNode object = Json.object();
    JsonNode properties = schema.get("properties");
    if (properties == null || !properties.isObject()) {
      return object;
    }
    List<String> order = new ArrayList<>();
    JsonNode ordering = schema.get("propertyOrdering");
    if (ordering != null && ordering.isArray()) {
      ordering.forEach(p -> order.add(p.asText()));
    }
    for (Iterator<String> it = properties.fieldNames(); it.hasNext();) {
      String field = it.next();
      if (!order.contains(field)) {
        order.add(field);
      }
    }
    for (String field : order) {
      if (properties.has(field)) {
        object.set(field, value(properties.get(field), field, depth + 1));
      }
    }
    return object;
  }

  private JsonNode array(JsonNode schema, String name, int depth) {
    long min = longOf(schema, "minItems", 0);
    long max = longOf(schema, "maxItems", Math.max(min, 3));
    long count = Math.min(max, Math.max(min, 2));
    ArrayNode array = Json.array();
    JsonNode items = schema.has("items") ? schema.get("items") : Json.object().put("type", "string");
    for (long i = 0; i < count; i++) {
      array.add(value(items, singular(name), depth + 1));
    }
    return array;
  }

  private long integer(JsonNode schema) {
    long min = longOf(schema, "minimum", 0);
    long max = longOf(schema, "maximum", Math.max(min, 100));
    return max <= min ? min : min + (long) (random.nextDouble() * (max - min + 1));
  }

  private double number(JsonNode schema) {
    double min = doubleOf(schema, "minimum", 0);
    double max = doubleOf(schema, "maximum", Math.max(min, 1));
    double value = min + random.nextDouble() * (max - min);
    return Math.round(value * 100) / 100.0;
  }

  private String string(JsonNode schema, String name) {
    String format = schema.path("format").asText("");
    String hex = Long.toHexString(random.nextLong() & 0xffffffL);
    String value = switch (format) {
      case "date-time" -> LocalDate.of(2026, 1, 1).plusDays(random.nextInt(365)) + "T12:00:00Z";
      case "date" -> LocalDate.of(2026, 1, 1).plusDays(random.nextInt(365)).toString();
      case "email" -> "user-" + hex + "@example.com";
      case "uri", "url" -> "https://example.com/" + hex;
      case "uuid" -> new UUID(random.nextLong(), random.nextLong()).toString();
      default -> name + "-" + hex;
    };
    long minLength = longOf(schema, "minLength", 0);
    long maxLength = longOf(schema, "maxLength", Long.MAX_VALUE);
    StringBuilder text = new StringBuilder(value);
    while (text.length() < minLength) {
      text.append('x');
    }
    return text.length() > maxLength ? text.substring(0, (int) maxLength) : text.toString();
  }

  private JsonNode resolve(String ref) {
    for (String prefix : List.of("#/$defs/", "#/definitions/")) {
      if (ref.startsWith(prefix)) {
        JsonNode defs = root.get(prefix.substring(2, prefix.length() - 1));
        if (defs != null && defs.has(ref.substring(prefix.length()))) {
          return defs.get(ref.substring(prefix.length()));
        }
      }
    }
    return ref.equals("#") ? root : null;
  }

  /** int64 fields arrive as numbers or (proto JSON) as strings. */
  private static long longOf(JsonNode schema, String field, long fallback) {
    JsonNode value = schema.get(field);
    if (value == null || value.isNull()) {
      return fallback;
    }
    try {
      return value.isNumber() ? value.asLong() : Long.parseLong(value.asText().trim());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  private static double doubleOf(JsonNode schema, String field, double fallback) {
    JsonNode value = schema.get(field);
    if (value == null || value.isNull()) {
      return fallback;
    }
    try {
      return value.isNumber() ? value.asDouble() : Double.parseDouble(value.asText().trim());
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  private static String singular(String name) {
    return name.endsWith("s") && name.length() > 1 ? name.substring(0, name.length() - 1) : name;
  }
}
