package dev.once.cli.stuck;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.cli.Failure;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where {@code once stuck} stopped: per list the last document shown (or that the list is exhausted), and the
 * cut-off time of the first page, so that every page judges "older than" against the same instant. Opaque to the
 * operator: URL-safe base64 of a small JSON object.
 *
 * @param cutoffBase Firestore's time when the first page was read
 * @param cursors list name → its cursor ({@link Cursor#END} when exhausted); a list not named starts at the beginning
 */
record PageToken(Instant cutoffBase, Map<String, Cursor> cursors) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** After the document with this id and ordering value (null when the list is ordered by id alone). */
  record Cursor(Instant orderedAt, String id) {
    static final Cursor END = new Cursor(null, null);

    boolean end() {
      return id == null;
    }
  }

  static PageToken first() {
    return new PageToken(null, Map.of());
  }

  Cursor cursor(String list) {
    return cursors.get(list);
  }

  PageToken with(Instant base, Map<String, Cursor> next) {
    return new PageToken(base, Map.copyOf(next));
  }

  boolean exhausted() {
    return !cursors.isEmpty() && cursors.values().stream().allMatch(Cursor::end);
  }

  String encode() {
    ObjectNode node = JSON.createObjectNode();
    node.put("t", cutoffBase.toString());
    ObjectNode lists = node.putObject("c");
    cursors.forEach((name, c) -> {
      ObjectNode n = lists.putObject(name);
      if (!c.end()) {
        n.put("id", c.id());
        if (c.orderedAt() != null) {
          n.put("at", c.orderedAt().toString());
        }
      }
    });
    return Base64.getUrlEncoder().withoutPadding().encodeToString(node.toString().getBytes(StandardCharsets.UTF_8));
  }

  static PageToken decode(String token) {
    try {
      JsonNode node = JSON.readTree(Base64.getUrlDecoder().decode(token.strip()));
      Map<String, Cursor> cursors = new LinkedHashMap<>();
      node.path("c").fields().forEachRemaining(e -> {
        JsonNode c = e.getValue();
        cursors.put(e.getKey(), c.has("id")
            ? new Cursor(c.has("at") ? Instant.parse(c.get("at").asText()) : null, c.get("id").asText())
            : Cursor.END);
      });
      return new PageToken(Instant.parse(node.path("t").asText()), cursors);
    } catch (Exception e) {
      throw Failure.usage("--page-token is not a token once stuck printed: " + Failure.reason(e));
    }
  }
}
