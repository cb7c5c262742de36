package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.Report;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.WebhookSignatures;
import dev.once.guard.Outcome;
import dev.once.pipeline.Effects;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the webhook answers a delivery whose signature checked out (the signatures and the completion are mocked; the
 * end-to-end suites sign real deliveries): which event names complete a job, and what an unreadable one gets.
 */
class BatchWebhookHandlerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final CompletionFlow completion = mock(CompletionFlow.class);
  private final WebhookHandler handler = new WebhookHandler("GeminiWebhook", mock(WebhookSignatures.class), completion);

  /** Google's cookbook worker handles {@code batch.completed}; the newer webhook API has {@code batch.cancelled}. */
  @ParameterizedTest
  @ValueSource(strings = {"batch.succeeded", "batch.completed", "batch.failed", "batch.expired", "batch.cancelled"})
  void everyEventThatEndsAJob_completesIt(String type) throws Exception {
    var job = GeminiCompletionKeys.ofName("batches/job-1");
    when(completion.complete(job)).thenReturn(Report.of(job, Effects.COMPLETE, new Outcome.Processed(Map.of(), 1)));

    Answer answer = deliver("{\"type\":\"" + type + "\",\"version\":\"v1\",\"data\":{\"id\":\"batches/job-1\"}}");

    assertEquals(200, answer.code());
    assertEquals("processed", answer.body().path("status").asText());
    verify(completion, times(1)).complete(job);
  }

  /** A 400 would be retried for 24 hours and count toward disabling the webhook: the same bytes cannot get better. */
  @ParameterizedTest
  @ValueSource(strings = {"{not json", "[1,2]", "\"text\"", "{\"data\":{\"id\":\"batches/job-1\"}}",
      "{\"type\":\"batch.succeeded\",\"data\":{}}", "{\"type\":\"batch.failed\",\"data\":{\"id\":\"batches/../../etc\"}}"})
  void aSignedDeliveryThatCannotBeRead_isLoggedAndAcknowledgedAsIgnored(String body) throws Exception {
    Answer answer = deliver(body);

    assertEquals(200, answer.code(), answer.body().toString());
    assertEquals("ignored", answer.body().path("status").asText());
    verify(completion, never()).complete(any());
  }

  private record Answer(int code, JsonNode body) {}

  private Answer deliver(String body) throws Exception {
    HttpRequest request = mock(HttpRequest.class);
    when(request.getMethod()).thenReturn("POST");
    when(request.getInputStream()).thenReturn(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
    when(request.getFirstHeader(any())).thenReturn(Optional.empty());
    HttpResponse response = mock(HttpResponse.class);
    ByteArrayOutputStream written = new ByteArrayOutputStream();
    when(response.getOutputStream()).thenReturn(written);
    int[] code = {0};
    doAnswer(call -> code[0] = call.getArgument(0)).when(response).setStatusCode(anyInt());
    handler.service(request, response);
    return new Answer(code[0], JSON.readTree(written.toByteArray()));
  }
}
