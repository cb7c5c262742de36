package dev.once.effects;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.once.local.http.Receiver;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NotifierTest {
  private final Receiver endpoint = Receiver.start();
  private final Notifier notifier = new Notifier(endpoint.url("/hook"), Duration.ofMillis(500));
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
  void clientErrors_areRefused_but408And429AreTransient() {
    endpoint.answerNext(400, 404, 410, 408, 429);
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Refused.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
  }

  @Test
  void serverErrorsTimeoutsAndRefusedConnections_areTransient() {
    endpoint.answerNext(500, 503);
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    assertInstanceOf(Notifier.Result.Failed.class, notifier.notify("k", body));
    endpoint.stallNext(Duration.ofSeconds(3));
    Notifier.Result timedOut = notifier.notify("k", body);
    assertInstanceOf(Notifier.Result.Failed.class, timedOut);
    Notifier closed = new Notifier(URI.create("http://127.0.0.1:9/"), Duration.ofMillis(500));
    assertInstanceOf(Notifier.Result.Failed.class, closed.notify("k", body));
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

  @Test
  void nonHttpEndpoints_areRefusedUpFront() {
    assertThrows(IllegalArgumentException.class, () -> new Notifier(URI.create("ftp://x/"), Duration.ofSeconds(1)));
  }
}
