package dev.once.functions.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.once.entry.PubSubMessage;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The message the webhook hands a job off with, as BatchCompleted reads it back. */
class BatchCompletionHandoffTest {
  @Test
  void theMessageNamesTheJob_andReadsBackToItsKey() {
    IdempotencyKey job = GeminiCompletionKeys.ofName("batches/abc-123");

    byte[] data = CompletionHandoff.data(job);

    assertEquals("{\"job\":\"batches/abc-123\"}", new String(data, StandardCharsets.UTF_8));
    assertEquals(job, CompletionHandoff.jobKey(new PubSubMessage("m-1", data, Map.of())));
  }

  /** Refused for good (acknowledged): redelivering the same bytes cannot name a job. */
  @ParameterizedTest
  @ValueSource(strings = {"", "not json", "{}", "{\"job\":7}", "{\"job\":\"batches/../x\"}", "[\"batches/a\"]"})
  void aMessageThatNamesNoJob_isRefused(String data) {
    assertThrows(InvalidKey.class, () -> CompletionHandoff.jobKey(
        new PubSubMessage("m-1", data.getBytes(StandardCharsets.UTF_8), Map.of())));
  }
}
