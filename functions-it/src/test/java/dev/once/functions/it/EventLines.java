package dev.once.functions.it;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.key.IdempotencyKey;
import dev.once.observe.Log;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The event lines (one per event, with an outcome label) a function wrote to its log, as Cloud Logging reads them. */
final class EventLines {
  private static final ObjectMapper JSON = new ObjectMapper();

  private EventLines() {}

  /** {@code function}'s event lines in {@code log} from byte {@code from} on. */
  static List<JsonNode> of(Path log, long from, String function) {
    try {
      byte[] all = Files.readAllBytes(log);
      String text = new String(all, (int) from, all.length - (int) from, StandardCharsets.UTF_8);
      List<JsonNode> lines = new ArrayList<>();
      for (String line : text.split("\n")) {
        if (line.startsWith("{") && line.contains("\"outcome\"")) {
          JsonNode entry = JSON.readTree(line);
          if (function.equals(entry.path(Log.LABELS).path("function").asText())) {
            lines.add(entry);
          }
        }
      }
      return lines;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a log line that is not JSON in " + log, e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Whether an event line is about {@code key}: lines name a key by its hash only (EventLog), so the lookup goes
   * through the key's {@link IdempotencyKey#logHash}; the key itself must not be in the line.
   */
  static boolean isAbout(JsonNode line, String key) {
    if (line.toString().contains(key)) {
      throw new AssertionError("a log line shows the key " + key + " itself: " + line);
    }
    return IdempotencyKey.logHash(key).equals(line.path("keyHash").asText());
  }

  /** Those of them for {@code key} whose labels are {@code effect} and {@code outcome}. */
  static List<JsonNode> of(Path log, String function, String key, String effect, String outcome) {
    return of(log, 0, function).stream()
        .filter(line -> isAbout(line, key))
        .filter(line -> effect.equals(line.path(Log.LABELS).path("effect").asText()))
        .filter(line -> outcome.equals(line.path(Log.LABELS).path("outcome").asText()))
        .toList();
  }
}
