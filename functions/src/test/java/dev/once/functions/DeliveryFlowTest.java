package dev.once.functions;

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

import dev.once.function.Report;
import dev.once.guard.Once;
import dev.once.ledger.InMemoryLedger;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.Notifier;
import java.nio.charset.StandardCharsets;
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
