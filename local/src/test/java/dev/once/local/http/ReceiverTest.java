package dev.once.local.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.Await;
import dev.once.wire.gemini.WebhookSigner;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The test endpoint records a request, then fails it as scripted: the sender's request arrived, its answer did not. */
class ReceiverTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private Receiver receiver;

  @BeforeEach
  void start() {
    receiver = Receiver.start();
  }

  @AfterEach
  void stop() {
    receiver.close();
  }

  private HttpResponse<String> post(String path, Duration timeout) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(receiver.url(path)).timeout(timeout)
        .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void late_recordsTheRequest_andAnswersAfterTheCallerGaveUp() throws Exception {
    receiver.ambiguousNext(1, AmbiguousFailure.late(Duration.ofSeconds(5)));

    assertThrows(HttpTimeoutException.class, () -> post("/notify", Duration.ofMillis(300)));

    assertEquals(1, receiver.receivedOn("/notify").size());
    assertEquals(1, receiver.counters().get("ambiguous"));
    assertEquals(200, post("/notify", Duration.ofSeconds(5)).statusCode(), "one scripted failure, used up");
    assertEquals(2, receiver.counters().get("received"));
  }

  @Test
  void held_recordsTheRequest_andAnswersOnlyOnceReleased() throws Exception {
    Faults.Gate gate = receiver.holdNext();
    CompletableFuture<HttpResponse<String>> held = CompletableFuture
        .supplyAsync(() -> {
          try {
            return post("/pay", Duration.ofMinutes(2));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    Await.until(Duration.ofMinutes(1), () -> gate.arrived() == 1, "the request at the gate");
    assertEquals(1, receiver.receivedOn("/pay").size(), "recorded before it is answered");
    assertEquals(200, post("/pay", Duration.ofMinutes(1)).statusCode(), "the next one is not held");
    assertTrue(!held.isDone(), "held until released");
    gate.release();
    assertEquals(200, held.get(1, TimeUnit.MINUTES).statusCode());
  }

  @Test
  void reset_recordsTheRequest_andResetsTheConnectionWithoutAnswer() throws Exception {
    receiver.ambiguousNext(1, AmbiguousFailure.RESET);
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), receiver.url("/").getPort())) {
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write(("POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
          .getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      SocketException reset = assertThrows(SocketException.class, () -> readAll(in));
      assertTrue(reset.getMessage().toLowerCase().contains("reset"), reset.getMessage());
    }
    assertEquals(1, receiver.receivedOn("/notify").size());
    assertEquals("{}", receiver.receivedOn("/notify").get(0).text());
  }

  @Test
  void serverError_recordsTheRequest_andAnswersA5xx() throws Exception {
    receiver.ambiguousNext(2, AmbiguousFailure.serverError(503));
    assertEquals(503, post("/notify", Duration.ofSeconds(5)).statusCode());
    assertEquals(503, post("/notify", Duration.ofSeconds(5)).statusCode());
    assertEquals(200, post("/notify", Duration.ofSeconds(5)).statusCode());
    assertEquals(3, receiver.receivedOn("/notify").size());
    assertEquals(2, receiver.counters().get("ambiguous"));
  }

  @Test
  void scriptedStatuses_andFailures_comeInTheOrderGiven() throws Exception {
    receiver.answerNext(409);
    receiver.ambiguousNext(1, AmbiguousFailure.SERVER_ERROR);
    assertEquals(409, post("/a", Duration.ofSeconds(5)).statusCode());
    assertEquals(500, post("/a", Duration.ofSeconds(5)).statusCode());
    assertEquals(200, post("/a", Duration.ofSeconds(5)).statusCode());
  }

  private static void readAll(InputStream in) throws IOException {
    byte[] buffer = new byte[1024];
    while (in.read(buffer) >= 0) {
      // an answer would be read here; a reset throws instead
    }
    throw new AssertionError("the connection was closed normally, not reset");
  }

  /** A verifying receiver answers a signed notification as scripted, and 401 to anything it cannot verify. */
  @Test
  void aVerifyingReceiver_refusesUnsignedMisSignedAndStaleRequests_andKeepsItsScript() throws Exception {
    WebhookSigner signer = WebhookSigner.fromSecret(WebhookSigner.newSecret());
    receiver.verifying(signer).answerNext(409);
    String body = "{\"n\":1}";
    long now = Instant.now().getEpochSecond();

    assertEquals(401, post("/notify", Duration.ofSeconds(5)).statusCode(), "unsigned");
    assertEquals(401, signed("msg_1", now, signer.sign("msg_1", now, "{\"n\":2}".getBytes(StandardCharsets.UTF_8)),
        body).statusCode(), "signed for another body");
    String other = WebhookSigner.fromSecret(WebhookSigner.newSecret())
        .sign("msg_1", now, body.getBytes(StandardCharsets.UTF_8));
    assertEquals(401, signed("msg_1", now, other, body).statusCode(), "another secret");
    long stale = now - 6 * 60;
    assertEquals(401, signed("msg_1", stale, signer.sign("msg_1", stale, body.getBytes(StandardCharsets.UTF_8)), body)
        .statusCode(), "six minutes old");
    String both = other + " " + signer.sign("msg_1", now, body.getBytes(StandardCharsets.UTF_8));
    assertEquals(409, signed("msg_1", now, both, body).statusCode(), "one of its signatures verifies: as scripted");
    assertEquals(4, receiver.counters().get("unverified"));
    assertEquals(5, receiver.received().size());
  }

  private HttpResponse<String> signed(String id, long timestamp, String signature, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(receiver.url("/notify")).timeout(Duration.ofSeconds(5))
        .header("webhook-id", id).header("webhook-timestamp", Long.toString(timestamp))
        .header("webhook-signature", signature).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
