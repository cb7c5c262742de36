package dev.once.functions.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.entry.Report;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.WebhookSignatures;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.observe.Log;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.testing.FakeHttp;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the webhook answers a delivery whose signature checked out (the signatures, the ledger's read and the publisher are
 * mocked; the end-to-end suites sign real deliveries): which event names hand a job off, what a job completed before,
 * a failed hand-off and an unreadable delivery get.
 */
class BatchWebhookHandlerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "projects/p/topics/batch-completions";
  private static final IdempotencyKey JOB = GeminiCompletionKeys.ofName("batches/job-1");
  private static final String SUCCEEDED = "{\"type\":\"batch.succeeded\",\"data\":{\"id\":\"batches/job-1\"}}";
  private final CompletedJobs completion = mock(CompletedJobs.class);
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final WebhookSignatures signatures = mock(WebhookSignatures.class);
  private final WebhookHandler handler = new WebhookHandler("GeminiWebhook", signatures, completion,
      new CompletionHandoff(() -> publisher, () -> TOPIC), Log.stdout());

  /**
   * Google's cookbook worker handles {@code batch.completed}; the newer webhook API has {@code batch.cancelled}. Each
   * is handed off to BatchCompleted, never completed while Gemini waits for the answer.
   */
  @ParameterizedTest
  @ValueSource(strings = {"batch.succeeded", "batch.completed", "batch.failed", "batch.expired", "batch.cancelled"})
  void everyEventThatEndsAJob_isHandedOffAndAnsweredQueued(String type) throws Exception {
    when(completion.earlier(JOB)).thenReturn(Optional.empty());
    when(publisher.publish(any(), any(), any())).thenReturn("m-1");

    Answer answer = deliver("{\"type\":\"" + type + "\",\"version\":\"v1\",\"data\":{\"id\":\"batches/job-1\"}}");

    assertEquals(200, answer.code());
    assertEquals("queued", answer.body().path("status").asText());
    assertEquals(JOB.value(), answer.body().path("key").asText());
    verify(publisher, times(1)).publish(TOPIC, "{\"job\":\"batches/job-1\"}".getBytes(StandardCharsets.UTF_8),
        Map.of(PubSubMessageKeys.ATTRIBUTE, JOB.value()));
  }

  {
    try {
      when(signatures.verify(any(), any())).thenReturn(true); // bound to this webhook, unless a test says otherwise
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A v1a signature names no endpoint: a delivery Google signed for another customer's webhook, replayed here, would
   * verify. It is handed off only for a job a document of this pipeline waits for; any other is ignored (200).
   */
  @Test
  void aDeliveryBoundToNoEndpoint_isHandedOffOnlyForAJobOfThisPipeline() throws Exception {
    when(signatures.verify(any(), any())).thenReturn(false);
    when(completion.earlier(JOB)).thenReturn(Optional.empty());
    when(publisher.publish(any(), any(), any())).thenReturn("m-1");

    when(completion.submittedHere(JOB)).thenReturn(false);
    Answer foreign = deliver(SUCCEEDED);
    assertEquals(200, foreign.code());
    assertEquals("ignored", foreign.body().path("status").asText());
    verifyNoInteractions(publisher);

    when(completion.submittedHere(JOB)).thenReturn(true);
    assertEquals("queued", deliver(SUCCEEDED).body().path("status").asText());
    verify(publisher, times(1)).publish(any(), any(), any());
  }

  /** A redelivery after the job was completed costs one read and no message. */
  @Test
  void aJobCompletedBefore_isAnsweredFromItsRecord_withoutAHandOff() throws Exception {
    when(completion.earlier(JOB))
        .thenReturn(Optional.of(Report.of(JOB, Effects.PUBLISH, new Outcome.Duplicate(Map.of(), 1))));

    Answer answer = deliver(SUCCEEDED);

    assertEquals(200, answer.code());
    assertEquals("duplicate", answer.body().path("status").asText());
    verifyNoInteractions(publisher);
  }

  /**
   * A publish that failed may still have landed. Gemini retries the 503, and the retry hands the job off again: two
   * hand-offs, which BatchCompleted's ledger claim turns into one completion (BatchWebhookAckIT counts it).
   */
  @Test
  void aHandOffThatFailed_isA503_andGeminisRetryHandsTheJobOffAgain() throws Exception {
    when(completion.earlier(JOB)).thenReturn(Optional.empty());
    when(publisher.publish(any(), any(), any()))
        .thenThrow(new IllegalStateException("Pub/Sub did not accept the message within PT10S"))
        .thenReturn("m-2");

    Answer failed = deliver(SUCCEEDED);
    Answer retried = deliver(SUCCEEDED);

    assertEquals(503, failed.code());
    assertEquals("unavailable", failed.body().path("status").asText());
    assertEquals(200, retried.code());
    assertEquals("queued", retried.body().path("status").asText());
    verify(publisher, times(2)).publish(any(), any(), any());
  }

  /** Firestore unavailable: Gemini must retry, and nothing is handed off on a guess. */
  @Test
  void aLedgerThatCannotBeRead_isA503_andNothingIsHandedOff() throws Exception {
    when(completion.earlier(JOB)).thenThrow(new IllegalStateException("UNAVAILABLE: firestore"));

    Answer answer = deliver(SUCCEEDED);

    assertEquals(503, answer.code());
    verifyNoInteractions(publisher);
  }

  /** A 400 would be retried for 24 hours and count toward disabling the webhook: the same bytes cannot get better. */
  @ParameterizedTest
  @ValueSource(strings = {"{not json", "[1,2]", "\"text\"", "{\"data\":{\"id\":\"batches/job-1\"}}",
      "{\"type\":\"batch.succeeded\",\"data\":{}}",
      "{\"type\":\"batch.failed\",\"data\":{\"id\":\"batches/../../etc\"}}"})
  void aSignedDeliveryThatCannotBeRead_isLoggedAndAcknowledgedAsIgnored(String body) throws Exception {
    Answer answer = deliver(body);

    assertEquals(200, answer.code(), answer.body().toString());
    assertEquals("ignored", answer.body().path("status").asText());
    verifyNoInteractions(publisher);
  }

  private record Answer(int code, JsonNode body) {}

  private Answer deliver(String body) throws Exception {
    FakeHttp.Response response = new FakeHttp.Response();
    handler.service(FakeHttp.post("/", body), response);
    return new Answer(response.status(), JSON.readTree(response.body()));
  }
}
