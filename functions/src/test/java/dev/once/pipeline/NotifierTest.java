package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.IdempotentHttp;
import dev.once.guard.Once;
import dev.once.internal.key.Sha256;
import dev.once.ledger.InMemoryLedger;
import dev.once.local.http.Receiver;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

class NotifierTest {
  private final Receiver endpoint = Receiver.start();
  static final NotificationSigner SIGNER = NotificationSigner.fromSecrets(dev.once.local.gemini.WebhookSigner.newSecret());
  private final Notifier notifier = new Notifier(endpoint.url("/hook"), Duration.ofMillis(500), SIGNER);
  private final byte[] body = "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8);

  @AfterEach
  void stop() {
    endpoint.close();
  }

  @Test
  void twoHundreds_areDelivered_withTheKeyAndJson() {
    endpoint.answerNext(204);
    assertEquals(new Notifier.Result.Delivered(204), notifier.notify("gcs:b/a.pdf#1", body));
    Receiver.Received received = endpoint.received().get(0);
    assertEquals("gcs:b/a.pdf#1", received.header("Idempotency-Key"));
    assertEquals("application/json", received.header("Content-Type"));
    assertEquals("{\"status\":\"analysed\"}", received.text());
  }

  @Test
  void clientErrors_areRefused_butTimeoutThrottlingAndInProgressAreTransient() {
    endpoint.answerNext(400, 404, 410, 408, 409, 425, 429);
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    for (int i = 0; i < 4; i++) {
      assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    }
  }

  @Test
  void serverErrorsTimeoutsAndRefusedConnections_areTransient() {
    endpoint.answerNext(500, 503);
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    endpoint.stallNext(Duration.ofSeconds(3));
    Notifier.Result timedOut = notifier.notify("k", body);
    assertInstanceOf(Notifier.Result.Failed.class, timedOut);
    Notifier closed = new Notifier(URI.create("http://127.0.0.1:9/"), Duration.ofMillis(500), SIGNER);
    assertInstanceOf(Notifier.Result.Failed.class, closed.notify("k", body));
  }

  @Test
  void anEndpointThatTricklesItsBody_isCutOffAtTheTimeout() throws Exception {
    try (java.net.ServerSocket server = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Thread.ofVirtual().start(() -> {
        try (java.net.Socket client = server.accept()) {
          client.getInputStream().read(new byte[4096]);
          client.getOutputStream().write(
              "HTTP/1.1 400 Bad Request\r\nContent-Length: 1000000\r\n\r\nstill sending".getBytes(StandardCharsets.US_ASCII));
          client.getOutputStream().flush();
          client.getInputStream().read(); // holds the connection open until the client gives up
        } catch (java.io.IOException ignored) {
          // the client hung up
        }
      });
      Notifier trickled = new Notifier(URI.create("http://127.0.0.1:" + server.getLocalPort() + "/"), Duration.ofMillis(500),
          SIGNER);
      Notifier.Result result = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10),
          () -> trickled.notify("k", body), "the notifier must not wait for the rest of the body");
      assertInstanceOf(Notifier.Result.Refused.class, result);
    }
  }

  @Test
  void redirects_areNotFollowed_andCountAsTransient_soNothingIsLostWhileTheUrlIsFixed() {
    endpoint.answerNext(302);
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
  }

  @Test
  void keysWithControlOrNonAsciiCharacters_areEncodedTheSameWayEveryTime() {
    String key = "gcs:b/factura ñ\u0001.pdf#7";
    notifier.notify(key, body);
    notifier.notify(key, body);
    assertEquals("gcs:b/factura%20%C3%B1%01.pdf#7", endpoint.received().get(0).header("Idempotency-Key"));
    assertEquals(endpoint.received().get(0).header("Idempotency-Key"), endpoint.received().get(1).header("Idempotency-Key"));
  }

  /** An ordinary Japanese object name: 9 bytes per character once percent-encoded, far over 255 characters. */
  @Test
  void aKeyTooLongOnceEncoded_isSentAsItsDigest_whichAnIdempotentHttpReceiverAccepts_onEveryTry() throws Exception {
    String key = "gcs:inbox/請求書_2024年03月分_株式会社サンプル商事_東京本社経理部宛.pdf#1637874272256630";
    notifier.notify(key, body);
    notifier.notify(key, body);

    String header = endpoint.received().get(0).header("Idempotency-Key");
    assertEquals("sha256:" + Sha256.hex(key), header);
    assertEquals(header, endpoint.received().get(1).header("Idempotency-Key"));
    assertEquals(200, answerOfAnIdempotentHttpReceiver(header));
  }

  @Test
  void keysThatFitOnceEncoded_areSentReadable_notAsADigest() {
    String key = "gcs:inbox/" + "a".repeat(255 - "gcs:inbox/".length());
    notifier.notify(key, body);
    assertEquals(key, endpoint.received().get(0).header("Idempotency-Key"));
  }

  /** The status the project's own Idempotency-Key guard answers a POST carrying {@code header} (in-memory ledger). */
  private int answerOfAnIdempotentHttpReceiver(String header) throws Exception {
    IdempotentHttp<byte[]> receiver = IdempotentHttp.of("Notified", new Once(new InMemoryLedger()),
        (request, sent) -> sent, (sent, attempt) -> IdempotentHttp.Answer.of(200, "text/plain", new byte[0]));
    HttpRequest request = mock(HttpRequest.class);
    when(request.getMethod()).thenReturn("POST");
    when(request.getPath()).thenReturn("/hook");
    when(request.getHeaders()).thenReturn(Map.of("Idempotency-Key", List.of(header)));
    when(request.getInputStream()).thenReturn(new ByteArrayInputStream(body));
    HttpResponse response = mock(HttpResponse.class);
    when(response.getOutputStream()).thenReturn(new ByteArrayOutputStream());
    receiver.service(request, response);
    ArgumentCaptor<Integer> status = ArgumentCaptor.forClass(Integer.class);
    verify(response).setStatusCode(status.capture());
    return status.getValue();
  }

  /** https only; plain http to this machine alone, for local runs and tests (a name is never resolved for that). */
  @Test
  void onlyHttpsEndpoints_orHttpToThisMachine_areAccepted() {
    for (String refused : List.of("ftp://x/", "http://example.com/notify", "http://10.0.0.1/", "http://127.0.0.1.nip.io/",
        "http://localhost.example.com/", "https:///nohost")) {
      assertThrows(IllegalArgumentException.class,
          () -> new Notifier(URI.create(refused), Duration.ofSeconds(1), SIGNER), refused);
    }
    for (String accepted : List.of("https://example.com/notify", "http://127.0.0.1:9400/notify", "http://localhost:1/",
        "http://[::1]:8080/", "http://127.1.2.3/")) {
      new Notifier(URI.create(accepted), Duration.ofSeconds(1), SIGNER);
    }
  }
}
