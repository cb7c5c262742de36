package dev.once.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.InvalidSetting;
import dev.once.config.MissingSetting;
import dev.once.config.Settings;
import dev.once.entry.IdempotentHttp;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.ledger.Call;
import dev.once.ledger.LedgerOptions;
import dev.once.local.http.Receiver;
import dev.once.testing.FakeHttp;
import dev.once.testing.InMemoryLedger;
import dev.once.testing.ManualClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/** The POST-once helper against a real local endpoint: what each answer says about the POST, and the key it sends. */
class IdempotentPostTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:b/a.pdf#1");
  private final Receiver endpoint = Receiver.start();
  private final IdempotentPost post = IdempotentPost.to(endpoint.url("/hook")).withTimeout(Duration.ofSeconds(5));
  private final byte[] body = "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8);
  private final ManualClock clock = new ManualClock();
  private final InMemoryLedger ledger = new InMemoryLedger(clock);
  private final Once once = new Once(ledger);

  @AfterEach
  void stop() {
    endpoint.close();
  }

  private IdempotentPost.Response post(IdempotentPost to) {
    return to.post(KEY, "application/json", body);
  }

  @Test
  void twoHundreds_areDone_withTheKeyAndTheContentType() {
    endpoint.answerNext(204);
    IdempotentPost.Response answer = post(post);
    assertEquals(204, answer.status());
    assertTrue(answer.ok());
    Receiver.Received received = endpoint.received().get(0);
    assertEquals("gcs:b/a.pdf#1", received.header("Idempotency-Key"));
    assertEquals("application/json", received.header("Content-Type"));
    assertEquals("{\"status\":\"analysed\"}", received.text());
  }

  @Test
  void clientErrors_areRefusals_butTimeoutThrottlingAndInProgressAreNot() {
    endpoint.answerNext(400, 404, 410, 408, 409, 425);
    for (int status : new int[] {400, 404, 410}) {
      IdempotentPost.Response refused = post(post);
      assertEquals(status, refused.status());
      assertFalse(refused.ok());
    }
    for (int i = 0; i < 3; i++) {
      assertThrows(IdempotentPost.PostFailed.class, () -> post(post), "408, 409, 425: it may have happened");
    }
  }

  @Test
  void throttlingUnavailabilityAndARefusedConnection_wereNotPerformed() {
    endpoint.answerNext(429, 503);
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> post(post)).kind());
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> post(post)).kind());
    IdempotentPost closed = IdempotentPost.to(URI.create("http://127.0.0.1:9/")).withTimeout(Duration.ofSeconds(5));
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> post(closed)).kind());
  }

  @Test
  void otherServerErrors_timeoutsAndRedirects_mayHaveHappened() {
    endpoint.answerNext(500, 502, 302);
    for (int i = 0; i < 3; i++) {
      assertThrows(IdempotentPost.PostFailed.class, () -> post(post));
    }
    endpoint.stallNext(Duration.ofSeconds(4));
    IdempotentPost.PostFailed late = assertThrows(IdempotentPost.PostFailed.class,
        () -> post(post.withTimeout(Duration.ofSeconds(1))));
    assertTrue(late.getMessage().contains("no answer within"), late.getMessage());
  }

  @Test
  void anEndpointThatTricklesItsBody_isCutOffAtTheTimeout() throws Exception {
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread.ofVirtual().start(() -> {
        try (Socket client = server.accept()) {
          client.getInputStream().read(new byte[4096]);
          client.getOutputStream().write(
              "HTTP/1.1 400 Bad Request\r\nContent-Length: 1000000\r\n\r\nstill sending"
                  .getBytes(StandardCharsets.US_ASCII));
          client.getOutputStream().flush();
          client.getInputStream().read(); // holds the connection open until the client gives up
        } catch (IOException ignored) {
          // the client hung up
        }
      });
      IdempotentPost trickled = IdempotentPost.to(URI.create("http://127.0.0.1:" + server.getLocalPort() + "/"))
          .withTimeout(Duration.ofSeconds(1));
      IdempotentPost.Response answer = Assertions.assertTimeoutPreemptively(
          Duration.ofSeconds(10), () -> post(trickled), "the POST must not wait for the rest of the body");
      assertEquals(400, answer.status());
    }
  }

  @Test
  void headersComputedPerRequest_areSentBesideTheKey() {
    IdempotentPost signed = post.withHeaders((key, sent) -> Map.of("webhook-signature", "v1," + Sha256.hex(sent),
        "webhook-id", key.documentId()));
    post(signed);
    Receiver.Received received = endpoint.received().get(0);
    assertEquals("v1," + Sha256.hex(body), received.header("webhook-signature"));
    assertEquals(KEY.documentId(), received.header("webhook-id"));
  }

  @Test
  void keysWithControlOrNonAsciiCharacters_areEncodedTheSameWayEveryTime() {
    IdempotencyKey key = IdempotencyKey.of("gcs:b/factura ñ\u0001.pdf#7");
    post.post(key, "application/json", body);
    post.post(key, "application/json", body);
    assertEquals("gcs:b/factura%20%C3%B1%01.pdf#7", endpoint.received().get(0).header("Idempotency-Key"));
    assertEquals(endpoint.received().get(0).header("Idempotency-Key"),
        endpoint.received().get(1).header("Idempotency-Key"));
  }

  /** An ordinary Japanese object name: 9 bytes per character once percent-encoded, far over 255 characters. */
  @Test
  void aKeyTooLongOnceEncoded_isSentAsItsDigest_whichAnIdempotentHttpReceiverAccepts_onEveryTry() throws Exception {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/請求書_2024年03月分_株式会社サンプル商事_東京本社経理部宛.pdf#1637874272256630");
    post.post(key, "application/json", body);
    post.post(key, "application/json", body);

    String header = endpoint.received().get(0).header("Idempotency-Key");
    assertEquals("sha256:" + Sha256.hex(key.value()), header);
    assertEquals(header, endpoint.received().get(1).header("Idempotency-Key"));
    IdempotentHttp<byte[]> receiver = IdempotentHttp.of("Notified", new Once(new InMemoryLedger()),
        (request, sent) -> sent, (sent, attempt) -> IdempotentHttp.Answer.of(200, "text/plain", new byte[0]));
    FakeHttp.Response answered = new FakeHttp.Response();
    receiver.service(FakeHttp.post("/hook", body).key(header), answered);
    assertEquals(200, answered.status());
  }

  @Test
  void keysThatFitOnceEncoded_areSentReadable_notAsADigest() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/" + "a".repeat(255 - "gcs:inbox/".length()));
    post.post(key, "application/json", body);
    assertEquals(key.value(), endpoint.received().get(0).header("Idempotency-Key"));
  }

  @Test
  void nonHttpEndpoints_areRefusedUpFront() {
    assertThrows(IllegalArgumentException.class, () -> IdempotentPost.to(URI.create("ftp://x/")));
  }

  /** In an effect: a try not performed is not counted against the cap; a refusal rejects the effect with its answer. */
  @Test
  void asAnEffect_aTryNotPerformedDoesNotUseUpTheCap_andARefusalRejectsIt() {
    endpoint.answerNext(503, 200);
    assertThrows(Refusal.class, () -> once.run(KEY, "notify", Policy.atMostOnce(),
        attempt -> post.send(attempt, "application/json", body)));
    assertInstanceOf(Outcome.Processed.class, once.run(KEY, "notify", Policy.atMostOnce(),
        attempt -> post.send(attempt, "application/json", body)), "the 503 did not use up the one try");
    assertEquals(Call.Outcome.NOT_PERFORMED, ledger.lookup(KEY, "notify").orElseThrow().calls().get(0).outcome());

    IdempotencyKey gone = IdempotencyKey.of("gcs:b/gone.pdf#1");
    endpoint.answerNext(410);
    Outcome.Rejected rejected = assertInstanceOf(Outcome.Rejected.class, once.run(gone, "notify",
        attempt -> post.send(attempt, "application/json", body)));
    assertTrue(rejected.reason().contains("refused with 410"), rejected.reason());
  }

  @Test
  void asAnEffect_aPostThatMayHaveHappened_isNotSentAgain_atMostOnce() {
    endpoint.answerNext(500);
    assertThrows(IdempotentPost.PostFailed.class, () -> once.run(KEY, "email", Policy.atMostOnce(),
        attempt -> post.send(attempt, "application/json", body)));
    Outcome.Rejected gaveUp = assertInstanceOf(Outcome.Rejected.class, once.run(KEY, "email", Policy.atMostOnce(),
        attempt -> post.send(attempt, "application/json", body)));
    assertTrue(gaveUp.gaveUp());
    assertEquals(1, endpoint.received().size(), "one POST, never a second");
  }

  @Test
  void asAnEffect_aHolderWhoseLeaseCannotCoverThePost_doesNotSendIt() {
    IdempotentPost slow = post.withTimeout(LedgerOptions.defaults().lease().plusMinutes(1));
    Refusal refused = assertThrows(Refusal.class, () -> once.run(KEY, "notify", attempt -> {
      // An operator released the claim meanwhile: the renewal that would cover the POST is refused.
      ledger.forceRelease(KEY, "notify", 1, "operator", "stuck", true);
      return slow.send(attempt, "application/json", body);
    }));
    assertEquals(Refusal.Kind.NOT_PERFORMED, refused.kind());
    assertEquals(0, endpoint.received().size());
  }

  /** An operator's deliberate re-run (Ledger.invalidate) sends KEY/rerun-2: a new request to the receiver. */
  @Test
  void asAnEffect_aRerunAfterAnInvalidation_isSentWithItsOwnKey() {
    once.run(KEY, "notify", attempt -> post.send(attempt, "application/json", body));
    assertTrue(ledger.invalidate(KEY, "notify", 1, "operator", "the endpoint lost it"));
    // Another instance: this one remembers the first run as settled.
    new Once(ledger).run(KEY, "notify", attempt -> post.send(attempt, "application/json", body));

    assertEquals(2, endpoint.received().size());
    assertEquals("gcs:b/a.pdf#1", endpoint.received().get(0).header("Idempotency-Key"));
    assertEquals("gcs:b/a.pdf#1/rerun-2", endpoint.received().get(1).header("Idempotency-Key"));
  }

  @Test
  void anEndpointNamedByAVariable_failsItsStartNamingIt_whenUnsetOrNoUrl() {
    MissingSetting missing = assertThrows(MissingSetting.class,
        () -> IdempotentPost.toUrlIn(Settings.of(Map.of()), "MAILER_URL"));
    assertTrue(missing.getMessage().startsWith("MAILER_URL is not set"), missing.getMessage());
    InvalidSetting invalid = assertThrows(InvalidSetting.class,
        () -> IdempotentPost.toUrlIn(Settings.of(Map.of("MAILER_URL", "mailer:25")), "MAILER_URL"));
    assertTrue(invalid.getMessage().startsWith("MAILER_URL is not an http(s) URL"), invalid.getMessage());
    assertEquals(endpoint.url("/hook"), IdempotentPost.toUrlIn(
        Settings.of(Map.of("MAILER_URL", endpoint.url("/hook").toString())), "MAILER_URL").endpoint());
  }

  @Test
  void aValue_isPostedAsJson() {
    record Charge(long amount, String currency) {}
    once.run(KEY, "charge", attempt -> {
      post.postJson(attempt, new Charge(1200, "eur"));
      return Completion.of(Map.of());
    });
    assertEquals("{\"amount\":1200,\"currency\":\"eur\"}", endpoint.received().get(0).text());
    assertEquals("application/json", endpoint.received().get(0).header("Content-Type"));
  }
}
