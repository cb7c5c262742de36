package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.entry.EventEntry;
import dev.once.entry.PubSubMessage;
import dev.once.functions.delivery.DeliveryFlow;
import dev.once.guard.Once;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.ResultSignature;
import dev.once.testing.FakeEndpoint;
import dev.once.testing.InMemoryLedger;
import dev.once.wire.gemini.WebhookSigner;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Anyone able to publish to the results topic (the Cloud Storage agent, a mis-set bucket notification, a leaked
 * publisher role) can put a message there that names a real document's key. MessageDelivered delivers only results
 * signed with RESULTS_SIGNING_KEY: a forged one, arriving first, is refused before its key reaches the ledger, so it
 * is not notified and the real result, arriving after it, is notified once.
 */
class ForgedResultTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String KEY = "gcs:inbox/invoice-7.pdf#1700000000000001";
  private static final byte[] REAL =
      "{\"invoice\":{\"total\":\"1200.00\"},\"key\":\"gcs:inbox/invoice-7.pdf#1700000000000001\",\"status\":\"analysed\"}"
          .getBytes(StandardCharsets.UTF_8);
  private static final byte[] FORGED =
      "{\"invoice\":{\"total\":\"0.01\"},\"key\":\"gcs:inbox/invoice-7.pdf#1700000000000001\",\"status\":\"analysed\"}"
          .getBytes(StandardCharsets.UTF_8);

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final FakeEndpoint endpoint = FakeEndpoint.start();
  private final IdempotentPost notifier =
      IdempotentPost.to(endpoint.uri("/notify")).withTimeout(Duration.ofSeconds(10));
  private final EventEntry<PubSubMessage> entry = MessageDelivered.entry(
      new DeliveryFlow(new Once(ledger), () -> notifier, () -> mock(MessagePublisher.class),
          () -> "projects/p/topics/d"),
      TestSignatures.RESULTS);

  @AfterEach
  void stop() {
    endpoint.close();
  }

  @Test
  void forgedResultsArrivingFirst_areNeitherNotifiedNorClaimTheKey_andTheRealOneIsNotifiedOnce() throws Exception {
    ResultSignature stranger = ResultSignature.fromKeys(WebhookSigner.newSecret());
    Map<String, String> movedSignature = attributes(KEY, TestSignatures.RESULTS.sign("gcs:inbox/other.pdf#1", FORGED));
    for (Map<String, String> forged : List.of(
        attributes(KEY, null), // no signature at all
        attributes(KEY, stranger.sign(KEY, FORGED)), // signed with a key the pipeline does not hold
        attributes(KEY, TestSignatures.RESULTS.sign(KEY, REAL)), // a real signature over other data
        movedSignature, // a real signature made for another key
        attributes(KEY, "v1,AAAA v1,not-base64"))) {
      entry.accept(event("forged-" + forged.hashCode(), FORGED, forged));
    }
    assertTrue(endpoint.received().isEmpty(), "no forged message notified");
    assertTrue(ledger.lookup(IdempotencyKey.of(KEY), Effects.NOTIFY).isEmpty(), "no forged message claimed the key");

    entry.accept(event("real", REAL, attributes(KEY, TestSignatures.RESULTS.sign(KEY, REAL))));
    entry.accept(event("real-again", REAL, attributes(KEY, TestSignatures.RESULTS.sign(KEY, REAL))));

    assertEquals(1, endpoint.received().size(), "the real result notified once");
    assertEquals(KEY, endpoint.received().get(0).idempotencyKey());
  }

  /** During a rotation the publisher signs with the old key and the new; a verifier holding either accepts. */
  @Test
  void aResultSignedDuringARotation_isAcceptedByAVerifierHoldingEitherKey() {
    String old = WebhookSigner.newSecret();
    String next = WebhookSigner.newSecret();
    String signed = ResultSignature.fromKeys(old + " " + next).sign(KEY, REAL);
    assertTrue(ResultSignature.fromKeys(old).verifies(attributes(KEY, signed), REAL));
    assertTrue(ResultSignature.fromKeys(next).verifies(attributes(KEY, signed), REAL));
  }

  private static Map<String, String> attributes(String key, String signature) {
    Map<String, String> attributes = new HashMap<>();
    attributes.put("idempotency_key", key);
    if (signature != null) {
      attributes.put(ResultSignature.ATTRIBUTE, signature);
    }
    return attributes;
  }

  private static CloudEvent event(String messageId, byte[] data, Map<String, String> attributes) throws Exception {
    Map<String, Object> message = Map.of("data", Base64.getEncoder().encodeToString(data), "messageId", messageId,
        "attributes", attributes);
    return CloudEventBuilder.v1().withId(messageId)
        .withSource(URI.create("//pubsub.googleapis.com/projects/p/topics/r"))
        .withType(PubSubMessage.PUBLISHED)
        .withData("application/json", JSON.writeValueAsBytes(Map.of("message", message, "subscription", "s"))).build();
  }
}
