package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.once.entry.Report;
import dev.once.guard.Refusal;
import dev.once.guard.Once;
import dev.once.internal.ledger.LedgerConfig;
import dev.once.ledger.InMemoryLedger;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.Notifier;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Notifying once per result, against the in-memory ledger, with the endpoint and Pub/Sub mocked. */
class DeliveryFlowTest {
  private static final String DEAD_LETTER = "projects/p/topics/dead-letter";
  private static final PubSubEvents.Message RESULT = new PubSubEvents.Message("42",
      "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8), Map.of("idempotency_key", "gcs:inbox/a.pdf#1"));

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final Notifier notifier = mock(Notifier.class);
  private final MessagePublisher publisher = mock(MessagePublisher.class);
  private final DeliveryFlow flow = new DeliveryFlow(new Once(ledger), () -> notifier, () -> publisher, () -> DEAD_LETTER);

  {
    when(notifier.timeout()).thenReturn(Duration.ofSeconds(10));
  }

  private Report deliver(PubSubEvents.Message message) {
    return flow.deliver(message, DeliveryFlow.key(message));
  }

  @Test
  void aResult_isNotifiedOnce_underItsProducersKey_andTheRedeliveryIsADuplicate() {
    when(notifier.notify(eq("gcs:inbox/a.pdf#1"), any())).thenReturn(new Notifier.Result.Delivered(200));

    assertEquals(OutcomeLabel.PROCESSED, deliver(RESULT).outcome());
    assertEquals(OutcomeLabel.DUPLICATE, deliver(RESULT).outcome());

    verify(notifier, times(1)).notify(anyString(), any());
  }

  @Test
  void aHolderWhoseLeaseCannotCoverThePost_doesNotSendIt_andTheClaimIsLeftToItsNewHolder() {
    // The POST may take longer than the lease left, and the claim was released by an operator meanwhile: the
    // renewal that would cover the POST is refused, so the notification is not sent by a holder that lost it.
    when(notifier.timeout()).thenAnswer(asked -> {
      ledger.forceRelease(DeliveryFlow.key(RESULT), Effects.NOTIFY, 1, "operator", "stuck", true);
      return LedgerConfig.defaults().lease().plusMinutes(1);
    });

    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> deliver(RESULT)).kind());

    verify(notifier, never()).notify(anyString(), any());
  }

  @Test
  void aTransientFailure_isRedelivered_andNotifiedOnceThen() {
    when(notifier.notify(anyString(), any()))
        .thenReturn(new Notifier.Result.Failed("the endpoint answered 503"))
        .thenReturn(new Notifier.Result.Delivered(204));

    assertThrows(DeliveryFlow.NotifyFailed.class, () -> deliver(RESULT));
    Report retried = deliver(RESULT);

    assertEquals(OutcomeLabel.PROCESSED, retried.outcome());
    assertEquals(2, retried.attempts());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void aRefusal_isRejected_andDeadLetteredOnce_withTheKeyAndTheReason() {
    when(notifier.notify(anyString(), any())).thenReturn(new Notifier.Result.Refused(410, "gone"));
    when(publisher.publish(eq(DEAD_LETTER), any(), anyMap())).thenReturn("d-1");

    Report first = deliver(RESULT);
    Report again = deliver(RESULT);

    assertEquals(Map.of(Effects.NOTIFY, "rejected", Effects.DEAD_LETTER, "processed"), first.effects());
    assertEquals(Map.of(Effects.NOTIFY, "rejected", Effects.DEAD_LETTER, "duplicate"), again.effects());
    verify(notifier, times(1)).notify(anyString(), any());
    verify(publisher, times(1)).publish(eq(DEAD_LETTER), eq(RESULT.data()), eq(Map.of(
        "idempotency_key", "gcs:inbox/a.pdf#1", "once_error", "the notify endpoint refused with 410: gone")));
  }

  @Test
  void copiesOfAResult_underNewMessageIds_getByteIdenticalBodies() throws Exception {
    PubSubEvents.Message copy = new PubSubEvents.Message("43", RESULT.data(), RESULT.attributes());

    assertArrayEquals(DeliveryFlow.body(DeliveryFlow.key(RESULT), RESULT), DeliveryFlow.body(DeliveryFlow.key(copy), copy));
  }

  /**
   * A publish whose answer was lost leaves a copy of the result (same key and data, new message id). The first
   * POST's answer is lost too, so the copy's delivery sends the key again: a receiver that follows the IETF
   * Idempotency-Key draft answers 422 when the body differs from the one it holds for the key.
   */
  @Test
  void theCopyOfAResult_whoseFirstPostWasReceivedButUnanswered_isNotRefusedByADraftFollowingReceiver() {
    Map<String, byte[]> firstBodies = new HashMap<>();
    when(notifier.notify(anyString(), any())).thenAnswer(call -> {
      byte[] first = firstBodies.putIfAbsent(call.getArgument(0), call.getArgument(1));
      if (first == null) {
        return new Notifier.Result.Failed("no answer within PT10S");
      }
      return Arrays.equals(first, call.getArgument(1))
          ? new Notifier.Result.Delivered(200) : new Notifier.Result.Refused(422, "idempotency_key_reused");
    });
    when(publisher.publish(eq(DEAD_LETTER), any(), anyMap())).thenReturn("d-1");
    PubSubEvents.Message copy = new PubSubEvents.Message("43", RESULT.data(), RESULT.attributes());

    assertThrows(DeliveryFlow.NotifyFailed.class, () -> deliver(RESULT));
    Report copyDelivered = deliver(copy);

    assertEquals(Map.of(Effects.NOTIFY, "processed"), copyDelivered.effects());
    verify(publisher, never()).publish(anyString(), any(), anyMap());
  }

  @Test
  void theSameKey_withAnotherPayload_isAConflict_andNotNotified() {
    when(notifier.notify(anyString(), any())).thenReturn(new Notifier.Result.Delivered(200));
    deliver(RESULT);
    PubSubEvents.Message other = new PubSubEvents.Message("43",
        "{\"status\":\"failed\"}".getBytes(StandardCharsets.UTF_8), RESULT.attributes());

    assertEquals(OutcomeLabel.CONFLICT, deliver(other).outcome());
    verify(notifier, times(1)).notify(anyString(), any());
  }

  @Test
  void aMessageWithoutAProducerKey_isKeyedByItsMessageId() {
    PubSubEvents.Message bare = new PubSubEvents.Message("77", new byte[] {1, 2}, Map.of());
    assertEquals("pubsub:77", DeliveryFlow.key(bare).value());
  }
}
