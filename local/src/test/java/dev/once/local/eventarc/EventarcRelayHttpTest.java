package dev.once.local.eventarc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.http.RawHttp;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The relay's HTTP side: generic ingest, admin, the raw binary-mode headers it sends, and bad input. */
class EventarcRelayHttpTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static EventarcRelay relay;
  private static Receiver function;

  @BeforeAll
  static void start() {
    relay = EventarcRelay.start(EventarcRelay.Options.defaults().withRetry(RetryPolicy.defaults().withMaxAttempts(2)
        .withBackoff(Duration.ofMillis(10), Duration.ofMillis(10))));
    function = Receiver.start();
  }

  @AfterAll
  static void stop() {
    relay.close();
    function.close();
  }

  private static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(relay.baseUrl() + path))
        .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertError(HttpResponse<String> response, int code) {
    assertEquals(code, response.statusCode(), response.body());
    JsonNode error = Json.parseTrusted(response.body()).get("error");
    assertEquals(code, error.get("code").asInt());
    assertTrue(error.get("message").isTextual());
  }

  /** A route for one topic's messages: another topic's go elsewhere (here nowhere: unrouted). */
  @Test
  void aTopicRoute_byAdmin_getsThatTopicsMessagesOnly() throws Exception {
    assertEquals(202, post("/_admin/routes?topic=projects/p/topics/http-only&url=" + function.url("/topic"), "")
        .statusCode());
    for (String topic : List.of("projects/p/topics/http-other", "projects/p/topics/http-only")) {
      assertEquals(202, post("/_ingest/cloudevent", "{}", "ce-specversion", "1.0", "ce-id", topic, "ce-source",
          "//pubsub.googleapis.com/" + topic, "ce-type", "google.cloud.pubsub.topic.v1.messagePublished",
          "Content-Type", "application/json").statusCode());
    }
    Receiver.Received got = Await.value(Bounds.CALL,
        () -> function.receivedOn("/topic").stream().findFirst(), "the relayed message");
    assertEquals("projects/p/topics/http-only", got.header("ce-id"));
    assertEquals(1, function.receivedOn("/topic").size());
  }

  @Test
  void ingestedCloudEvent_isRoutedByAdmin_andSentInBinaryMode_withEncodedHeaders() throws Exception {
    assertEquals(202, post("/_admin/routes?type=test.http&url=" + function.url("/fn"), "").statusCode());

    HttpResponse<String> accepted = post("/_ingest/cloudevent", "{\"x\":1}", "ce-specversion", "1.0",
        "ce-id", "abc-1", "ce-source", "//test/src", "ce-type", "test.http",
        "ce-subject", "objects/caf%C3%A9 100%25.pdf", "ce-time", "2026-11-02T10:00:00Z",
        "ce-tenant", "t1", "Content-Type", "application/json");
    assertEquals(202, accepted.statusCode(), accepted.body());

    Receiver.Received got = Await.value(Bounds.CALL,
        () -> function.receivedOn("/fn").stream().findFirst(), "the relayed event");
    assertEquals("1.0", got.header("ce-specversion"));
    assertEquals("abc-1", got.header("ce-id"));
    assertEquals("//test/src", got.header("ce-source"));
    assertEquals("test.http", got.header("ce-type"));
    assertEquals("objects/caf%C3%A9 100%25.pdf", got.header("ce-subject"));
    assertEquals("2026-11-02T10:00:00Z", got.header("ce-time"));
    assertEquals("t1", got.header("ce-tenant"));
    assertEquals("application/json", got.header("content-type"));
    assertEquals("{\"x\":1}", got.text());
    assertEquals("objects/café 100%.pdf", relay.events().stream().filter(e -> e.id().equals("abc-1")).findFirst()
        .orElseThrow().subject());

    assertEquals(202, post("/_admin/redeliver?id=abc-1", "").statusCode());
    Await.until(Bounds.CALL, () -> function.receivedOn("/fn").size() == 2, "the redelivery");
    // The function has the event before the relay has its answer: wait for the relay's count, over HTTP.
    JsonNode counters = Await.value(Bounds.CALL, () -> {
      JsonNode now = adminCounters();
      return now.path("delivered").asLong() >= 2 ? Optional.of(now) : Optional.empty();
    }, "two counted deliveries");
    assertEquals(1, counters.get("redelivered").asLong());
  }

  private static JsonNode adminCounters() {
    try {
      return Json.parseTrusted(HTTP.send(HttpRequest.newBuilder(URI.create(relay.baseUrl() + "/_admin/counters"))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void badIngest_is400_unknownPathsAndIds_are404() throws Exception {
    assertError(post("/_ingest/cloudevent", "{}", "ce-specversion", "1.0", "ce-source", "s", "ce-type", "t"), 400);
    assertError(post("/_ingest/cloudevent", "{}", "ce-id", "1", "ce-source", "s", "ce-type", "t"), 400);
    assertError(post("/_ingest/cloudevent", "{}", "ce-specversion", "1.0", "ce-id", "1", "ce-source", "s",
        "ce-type", "t", "ce-time", "yesterday"), 400);
    assertError(post("/_ingest/storage", "{not json"), 400);
    assertError(post("/_ingest/storage", "{\"eventType\":\"OBJECT_FINALIZE\",\"bucket\":\"b\"}"), 400);
    assertError(post("/_admin/redeliver?id=never-seen", ""), 404);
    assertError(post("/_admin/routes?type=x&url=not%20a%20url", ""), 400);
    assertError(post("/nowhere", ""), 404);
    RawHttp.exchange(relay.port(), "garbage\r\n\r\n");
    assertEquals(200, HTTP.send(HttpRequest.newBuilder(URI.create(relay.baseUrl() + "/_admin/counters")).build(),
        HttpResponse.BodyHandlers.ofString()).statusCode());
  }
}
