package dev.once.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.entry.EventEntry;
import dev.once.entry.PubSubMessage;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.wire.gemini.WebhookSigner;
import io.cloudevents.CloudEvent;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The fault kit, on a function done right (it passes every fault) and on three done wrong (each is caught by the
 * fault that breaks it): a key drawn afresh for each try, no guard at all, no key sent.
 */
class FaultsTest {
  private static final CloudEvent SIGNUP = Events.pubSub().attribute("userId", "u-1").json("{}").build();

  /** A welcome POST per user; {@code post} makes it, given the endpoint and the attempt's key. */
  private static EventEntry<PubSubMessage> welcome(Once once, BiFunction<IdempotencyKey, byte[], Object> post) {
    return EventEntry.of("Welcome", PubSubMessage::from,
        message -> IdempotencyKey.of("welcome", message.attributes().get("userId")),
        EventEntry.effect(once, "email", Policy.DEFAULT, (message, attempt) -> {
          post.apply(attempt.key(), message.data());
          return Completion.of(Map.of());
        }));
  }

  @FaultMatrix
  void aFunctionThatSendsItsKey_isCarriedOutOnce_underEveryFault(Faults faults) {
    IdempotentPost mailer = IdempotentPost.to(faults.endpoint().uri()).withTimeout(Duration.ofSeconds(5));
    EventEntry<PubSubMessage> entry = EventEntry.of("Welcome", PubSubMessage::from,
        message -> IdempotencyKey.of("welcome", message.attributes().get("userId")),
        EventEntry.effect(faults.once(), "email", Policy.DEFAULT,
            (message, attempt) -> mailer.send(attempt, "application/json", message.data())));

    faults.deliver(() -> entry.accept(SIGNUP));

    assertEquals(faults.fault() == Fault.REDELIVERED ? 1 : 2, faults.endpoint().received().size(),
        "a crash or a lost answer costs a second request, with the same key");
  }

  @Test
  void aKeyDrawnAfreshForEachTry_isCaught_whenAnAnswerIsLost() {
    try (Faults faults = Faults.of(Fault.ANSWER_LOST)) {
      IdempotentPost mailer = IdempotentPost.to(faults.endpoint().uri()).withTimeout(Duration.ofSeconds(5));
      EventEntry<PubSubMessage> entry = welcome(faults.once(),
          (key, body) -> mailer.post(IdempotencyKey.of(UUID.randomUUID().toString()), "application/json", body));

      faults.deliver(() -> entry.accept(SIGNUP));

      AssertionError caught = assertThrows(AssertionError.class, faults::verify);
      assertTrue(caught.getMessage().contains("carried out 2 effect(s) for 1 expected"), caught.getMessage());
    }
  }

  @Test
  void aKeyDrawnAfreshForEachTry_isCaught_whenTheProcessDiesAfterTheEffect() {
    try (Faults faults = Faults.of(Fault.CRASH_AFTER_EFFECT)) {
      IdempotentPost mailer = IdempotentPost.to(faults.endpoint().uri()).withTimeout(Duration.ofSeconds(5));
      EventEntry<PubSubMessage> entry = welcome(faults.once(),
          (key, body) -> mailer.post(IdempotencyKey.of(UUID.randomUUID().toString()), "application/json", body));

      faults.deliver(() -> entry.accept(SIGNUP));

      assertThrows(AssertionError.class, faults::verify);
    }
  }

  @Test
  void anUnguardedEffect_isCaught_byTheRedelivery() {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      IdempotentPost mailer = IdempotentPost.to(faults.endpoint().uri()).withTimeout(Duration.ofSeconds(5));

      faults.deliver(() -> mailer.post(IdempotencyKey.of(UUID.randomUUID().toString()), "application/json",
          new byte[0]));

      assertThrows(AssertionError.class, faults::verify);
    }
  }

  @Test
  void aRequestWithoutAKey_isCaught() throws Exception {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      HttpClient http = HttpClient.newHttpClient();
      EventEntry<PubSubMessage> entry = welcome(faults.once(), (key, body) -> {
        try {
          return http.send(HttpRequest.newBuilder(faults.endpoint().uri())
              .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
              HttpResponse.BodyHandlers.discarding());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });

      faults.deliver(() -> entry.accept(SIGNUP));

      AssertionError caught = assertThrows(AssertionError.class, faults::verify);
      assertTrue(caught.getMessage().contains("without an Idempotency-Key"), caught.getMessage());
    }
  }

  @Test
  void aFunctionThatNeverAcknowledges_isReported() {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      AssertionError never = assertThrows(AssertionError.class, () -> faults.deliver(() -> {
        throw new IllegalStateException("down");
      }));
      assertTrue(never.getMessage().contains("never acknowledged"), never.getMessage());
    }
  }

  @Test
  void theEndpoint_replaysAKeysFirstAnswer_andDoesNothingMore() throws Exception {
    try (FakeEndpoint endpoint = FakeEndpoint.start().answerNext(503, 201)) {
      IdempotentPost post = IdempotentPost.to(endpoint.uri("/x"));
      IdempotencyKey key = IdempotencyKey.of("k-1");
      assertThrows(Refusal.class, () -> post.post(key, "text/plain", new byte[0]), "503: nothing done");
      assertEquals(201, post.post(key, "text/plain", new byte[0]).status());
      assertEquals(201, post.post(key, "text/plain", new byte[0]).status(), "replayed");
      assertEquals(1, endpoint.performed());
      assertEquals(3, endpoint.received().size());
    }
  }

  @Test
  void aGeminiWebhook_isSignedAsStandardWebhooksSign() {
    Events.GeminiWebhook webhook = Events.geminiWebhook("batches/abc");
    FakeHttp.Request request = webhook.request();
    byte[] body = webhook.body();
    assertTrue(WebhookSigner.fromSecret(webhook.secret()).verify(
        request.getFirstHeader("webhook-id").orElseThrow(), request.getFirstHeader("webhook-timestamp").orElseThrow(),
        body, request.getFirstHeader("webhook-signature").orElseThrow()));
    assertTrue(new String(body, StandardCharsets.UTF_8).contains("\"id\":\"batches/abc\""));
  }
}
