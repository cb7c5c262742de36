package dev.once.functions.delivery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.once.entry.PubSubMessage;
import dev.once.entry.Report;
import dev.once.guard.Once;
import dev.once.guard.Refusal;
import dev.once.http.IdempotentPost;
import dev.once.ledger.LedgerOptions;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.testing.FakeEndpoint;
import dev.once.testing.InMemoryLedger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Notifying once per result, against the in-memory ledger and the test kit's endpoint, with Pub/Sub mocked. */
class DeliveryFlowTest {
  private static final String DEAD_LETTER = "projects/p/topics/dead-letter";
  private static final PubSubMessage RESULT = new PubSubMessage("42",
      "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8), Map.of("idempotency_key", "gcs:inbox/a.pdf#1"));

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final FakeEndpoint endpoint = FakeEndpoint.start();
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final IdempotentPost notifier = IdempotentPost.to(endpoint.uri("/hook")).withTimeout(Duration.ofSeconds(5));
  private final DeliveryFlow flow =
      new DeliveryFlow(new Once(ledger), () -> notifier, () -> publisher, () -> DEAD_LETTER);

  @AfterEach
  void stop() {
    endpoint.close();
  }

  private Report deliver(PubSubMessage message) {
    return flow.deliver(message, DeliveryFlow.key(message));
  }

  @Test
  void aResult_isNotifiedOnce_underItsProducersKey_andTheRedeliveryIsADuplicate() {
    assertEquals(OutcomeLabel.PROCESSED, deliver(RESULT).outcome());
    assertEquals(OutcomeLabel.DUPLICATE, deliver(RESULT).outcome());

    assertEquals(1, endpoint.received().size());
    assertEquals("gcs:inbox/a.pdf#1", endpoint.received().get(0).idempotencyKey());
  }

  @Test
  void aHolderWhoseLeaseCannotCoverThePost_doesNotSendIt_andTheClaimIsLeftToItsNewHolder() {
    // The POST may take longer than the lease left, and the claim was released by an operator meanwhile: the
    // renewal that would cover the POST is refused, so the notification is not sent by a holder that lost it.
    IdempotentPost slow = notifier.withTimeout(LedgerOptions.defaults().lease().plusMinutes(1));
    DeliveryFlow releasing = new DeliveryFlow(new Once(ledger), () -> {
      ledger.forceRelease(DeliveryFlow.key(RESULT), Effects.NOTIFY, 1, "operator", "stuck", true);
      return slow;
    }, () -> publisher, () -> DEAD_LETTER);

    assertEquals(Refusal.Kind.NOT_PERFORMED,
        assertThrows(Refusal.class, () -> releasing.deliver(RESULT, DeliveryFlow.key(RESULT))).kind());

    assertEquals(0, endpoint.received().size());
  }

  @Test
  void aTransientFailure_isRedelivered_andNotifiedOnceThen() {
    endpoint.answerNext(502);

    assertThrows(IdempotentPost.PostFailed.class, () -> deliver(RESULT));
    Report retried = deliver(RESULT);

    assertEquals(OutcomeLabel.PROCESSED, retried.outcome());
    assertEquals(2, retried.attempts());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aRefusal_isRejected_andDeadLetteredOnce_withTheKeyAndTheReason() {
    endpoint.answerNext(410);
    when(publisher.publish(eq(DEAD_LETTER), any(), anyMap())).thenReturn("d-1");

    Report first = deliver(RESULT);
    Report again = deliver(RESULT);

    assertEquals(Map.of(Effects.NOTIFY, "rejected", Effects.DEAD_LETTER, "processed"), first.effects());
    assertEquals(Map.of(Effects.NOTIFY, "rejected", Effects.DEAD_LETTER, "duplicate"), again.effects());
    assertEquals(1, endpoint.received().size());
    verify(publisher, times(1)).publish(eq(DEAD_LETTER), eq(RESULT.data()), eq(Map.of(
        "idempotency_key", "gcs:inbox/a.pdf#1", "once_error", "the notify endpoint refused with 410: ")));
  }

  @Test
  void copiesOfAResult_underNewMessageIds_getByteIdenticalBodies() throws Exception {
    PubSubMessage copy = new PubSubMessage("43", RESULT.data(), RESULT.attributes());

    assertArrayEquals(DeliveryFlow.body(DeliveryFlow.key(RESULT), RESULT),
        DeliveryFlow.body(DeliveryFlow.key(copy), copy));
  }

  /**
   * A publish whose answer was lost leaves a copy of the result (same key and data, new message id). The first
   * POST's answer is lost too, so the copy's delivery sends the key again, with the same body: the receiver answers
   * it as the first, and carries it out once.
   */
  @Test
  void theCopyOfAResult_whoseFirstPostWasReceivedButUnanswered_isNotifiedOnce() {
    endpoint.loseNextAnswers(1);
    PubSubMessage copy = new PubSubMessage("43", RESULT.data(), RESULT.attributes());

    assertThrows(IdempotentPost.PostFailed.class, () -> deliver(RESULT));
    Report copyDelivered = deliver(copy);

    assertEquals(Map.of(Effects.NOTIFY, "processed"), copyDelivered.effects());
    assertEquals(2, endpoint.received().size());
    assertArrayEquals(endpoint.received().get(0).body(), endpoint.received().get(1).body());
    assertEquals(1, endpoint.performed());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void theSameKey_withAnotherPayload_isAConflict_andNotNotified() {
    deliver(RESULT);
    PubSubMessage other = new PubSubMessage("43",
        "{\"status\":\"failed\"}".getBytes(StandardCharsets.UTF_8), RESULT.attributes());

    assertEquals(OutcomeLabel.CONFLICT, deliver(other).outcome());
    assertEquals(1, endpoint.received().size());
  }

  @Test
  void aMessageWithoutAProducerKey_isKeyedByItsMessageId() {
    PubSubMessage bare = new PubSubMessage("77", new byte[] {1, 2}, Map.of());
    assertEquals("pubsub:77", DeliveryFlow.key(bare).value());
  }

  @Test
  void fingerprint_ignoresJsonKeyOrder_butNotContent() {
    byte[] one = "{\"a\":1,\"b\":[1,2]}".getBytes(StandardCharsets.UTF_8);
    byte[] reordered = "{ \"b\":[1,2], \"a\":1 }".getBytes(StandardCharsets.UTF_8);
    byte[] other = "{\"a\":2,\"b\":[1,2]}".getBytes(StandardCharsets.UTF_8);
    assertEquals(DeliveryFlow.fingerprint(one), DeliveryFlow.fingerprint(reordered));
    assertNotEquals(DeliveryFlow.fingerprint(one), DeliveryFlow.fingerprint(other));
    assertTrue(DeliveryFlow.fingerprint(new byte[] {1, 2, 3}).startsWith("sha256:"));
  }
}
