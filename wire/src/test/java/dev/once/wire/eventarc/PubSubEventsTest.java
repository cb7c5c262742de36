package dev.once.wire.eventarc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.wire.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PubSubEventsTest {
  private static final String TOPIC = "projects/p/topics/t";
  private static final String SUBSCRIPTION = "projects/p/subscriptions/s";

  private static JsonNode message(CloudEvent event) {
    return Json.parseTrusted(event.dataText()).path("message");
  }

  @Test
  void aMessage_isTheEnvelopePubSubPushes_withItsSnakeCaseTwins() {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put("z", "1");
    attributes.put("a", "2");
    Instant published = Instant.parse("2026-03-01T10:15:30.123Z");
    CloudEvent event = PubSubEvents.messagePublished("42", attributes, "{}".getBytes(StandardCharsets.UTF_8), "k",
        published, SUBSCRIPTION, TOPIC);

    assertEquals("42", event.id());
    assertEquals("//pubsub.googleapis.com/" + TOPIC, event.source());
    assertEquals(CloudEvent.PUBSUB_PUBLISHED, event.type());
    assertNull(event.subject());
    assertEquals(published, event.time());
    JsonNode message = message(event);
    assertEquals(List.of("attributes", "data", "messageId", "message_id", "publishTime", "publish_time", "orderingKey"),
        message.properties().stream().map(Map.Entry::getKey).toList());
    assertEquals("z", message.path("attributes").fieldNames().next(), "the attributes keep their order");
    assertEquals("e30=", message.path("data").asText());
    assertEquals("2026-03-01T10:15:30.123Z", message.path("publish_time").asText());
    assertEquals(SUBSCRIPTION, Json.parseTrusted(event.dataText()).path("subscription").asText());
  }

  @Test
  void noAttributes_noData_noOrderingKey_areLeftOut() {
    for (String orderingKey : new String[] {"", null}) {
      JsonNode message = message(PubSubEvents.messagePublished("1", Map.of(), new byte[0], orderingKey,
          Instant.parse("2026-03-01T10:15:30Z"), SUBSCRIPTION, TOPIC));
      assertEquals(List.of("messageId", "message_id", "publishTime", "publish_time"),
          message.properties().stream().map(Map.Entry::getKey).toList());
      assertFalse(message.has("orderingKey"));
    }
  }

  /** As proto3 JSON writes a Timestamp: 0, 3, 6 or 9 digits of fraction, in UTC. */
  @Test
  void thePublishTime_hasTheFewestDigitsOfAThousand() {
    for (String time : List.of("2026-03-01T10:15:30Z", "2026-03-01T10:15:30.100Z", "2026-03-01T10:15:30.000100Z",
        "2026-03-01T10:15:30.000000100Z")) {
      assertEquals(time, message(PubSubEvents.messagePublished("1", Map.of(), null, null, Instant.parse(time),
          SUBSCRIPTION, TOPIC)).path("publishTime").asText());
    }
  }
}
