package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class GeminiCompletionKeysTest {
  private static final String EXPECTED = "gemini:batches/abc-123";

  static Stream<Arguments> spellingsOfOneJob() {
    return Stream.of(
        // The two seeds' examples: a webhook's name with a location prefix and trailing slash, the poller's operation.
        Arguments.of("name", "projects/p/locations/us/operations/abc-123/"),
        Arguments.of("operation", "operations/abc-123"),
        Arguments.of("name", "batches/abc-123"),
        Arguments.of("name", "abc-123"),
        Arguments.of("name", "  batches/abc-123 \n"),
        Arguments.of("name", "batches/abc-123///"),
        Arguments.of("name", "batchJobs/abc-123"),
        Arguments.of("name", "batchPredictionJobs/abc-123"),
        Arguments.of("name", "projects/123/locations/us-central1/batchPredictionJobs/abc-123"),
        Arguments.of("name", "models/gemini-2.5-flash/operations/abc-123"),
        Arguments.of("name", "/v1/batches/abc-123"),
        Arguments.of("name", "/v1beta/batches/abc-123"),
        Arguments.of("name", "v1beta/batches/abc-123"),
        Arguments.of("name", "https://generativelanguage.googleapis.com/v1beta/batches/abc-123"),
        Arguments.of("name", "/v1/projects/p/locations/europe-west4/batchPredictionJobs/abc-123/"),
        Arguments.of("name", "Batches/abc-123"),
        Arguments.of("operation", "abc-123"),
        Arguments.of("operationName", "operations/abc-123"),
        Arguments.of("resourceName", "projects/p/locations/us/batches/abc-123"),
        Arguments.of("operation", Map.of("name", "batches/abc-123")));
  }

  @ParameterizedTest(name = "{0} = {1}")
  @MethodSource("spellingsOfOneJob")
  void everySpelling_foldsToOneKey(String field, Object value) {
    assertEquals(EXPECTED, GeminiCompletionKeys.of(Map.of(field, value)).value());
  }

  @Test
  void webhookDataId_foldsToTheSameKey() {
    Map<String, Object> webhook = Map.of("type", "batch.succeeded", "version", "v1",
        "data", Map.of("id", "batches/abc-123", "output_file_uri", "files/x"));
    assertEquals(EXPECTED, GeminiCompletionKeys.of(webhook).value());
  }

  @Test
  void seedExamples_webhookAndPoller_foldToOneKey() {
    IdempotencyKey webhook = GeminiCompletionKeys.of(Map.of("name", "projects/p/locations/us/operations/abc-123/"));
    IdempotencyKey poller = GeminiCompletionKeys.of(Map.of("operation", "operations/abc-123"));
    assertEquals(webhook, poller);
    assertEquals(EXPECTED, poller.value());
  }

  @Test
  void idKeepsItsCase_becauseIdsAreOpaque() {
    assertEquals("gemini:batches/AbC", GeminiCompletionKeys.ofName("batches/AbC").value());
  }

  @Test
  void emptyNameField_fallsThroughToTheNextField() {
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("name", "  ");
    event.put("operation", "operations/abc-123");
    assertEquals(EXPECTED, GeminiCompletionKeys.of(event).value());
  }

  @Test
  void sameJobInSeveralFields_isAccepted_differentJobs_areRejected() {
    assertEquals(EXPECTED, GeminiCompletionKeys.of(Map.of("name", "batches/abc-123", "operation", "abc-123")).value());
    InvalidKey e = assertThrows(InvalidKey.class,
        () -> GeminiCompletionKeys.of(Map.of("name", "batches/abc-123", "operation", "batches/other")));
    assertTrue(e.getMessage().contains("several"), e.getMessage());
  }

  @Test
  void completionWithoutUsableName_isRejected_listingTheFieldsItSaw() {
    Map<String, Object> event = new HashMap<>();
    event.put("state", "SUCCEEDED");
    event.put("data", Map.of("output_file_uri", "files/x"));
    event.put("name", 42);
    InvalidKey e = assertThrows(InvalidKey.class, () -> GeminiCompletionKeys.of(event));
    for (String field : new String[] {"state", "data", "data.output_file_uri", "name"}) {
      assertTrue(e.getMessage().contains(field), field + " missing from: " + e.getMessage());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"batches/", "batches", "operations//", "files/abc", "batches/abc/def", "batches/../x",
      "projects/p/locations/us/", "batches/a b", "batches/é", "../../etc/passwd", "v1beta/", "batches/abc?x=1"})
  void malformedNames_areRejected(String name) {
    assertThrows(InvalidKey.class, () -> GeminiCompletionKeys.ofName(name));
    assertThrows(InvalidKey.class, () -> GeminiCompletionKeys.of(Map.of("name", name)));
  }

  @Test
  void jobName_isTheApiSpelling() {
    assertEquals("batches/abc-123", GeminiCompletionKeys.jobName(IdempotencyKey.of(EXPECTED)));
  }
}
