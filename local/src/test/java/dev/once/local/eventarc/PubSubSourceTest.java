package dev.once.local.eventarc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import com.google.protobuf.util.Timestamps;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.http.Json;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The event the relay makes of a pulled message, without an emulator: its fields, and its time as protobuf writes it. */
class PubSubSourceTest {
  @Test
  void aPulledMessage_becomesItsEvent_itsPublishTimeWrittenAsProtobufWritesIt() {
    for (Timestamp time : List.of(Timestamps.fromSeconds(1_772_360_130L), Timestamps.fromMillis(1_772_360_130_123L),
        Timestamps.fromMicros(1_772_360_130_123_456L), Timestamps.fromNanos(1_772_360_130_123_456_789L),
        Timestamp.newBuilder().setSeconds(1_772_360_130L).setNanos(100).build())) {
      PubsubMessage message = PubsubMessage.newBuilder().setMessageId("7").setData(ByteString.copyFromUtf8("{}"))
          .putAttributes("b", "1").putAttributes("a", "2").setOrderingKey("k").setPublishTime(time).build();

      CloudEvent event = PubSubSource.event(message, "projects/p/subscriptions/s", "projects/p/topics/t");

      JsonNode body = Json.parseTrusted(event.dataText()).path("message");
      assertEquals(Timestamps.toString(time), body.path("publishTime").asText());
      assertEquals(Timestamps.toString(time), body.path("publish_time").asText());
      assertEquals(Instant.ofEpochSecond(time.getSeconds(), time.getNanos()), event.time());
      assertEquals("7", event.id());
      assertEquals(Json.parseTrusted("{\"a\":\"2\",\"b\":\"1\"}"), body.path("attributes"));
      assertEquals("e30=", body.path("data").asText());
      assertEquals("k", body.path("orderingKey").asText());
    }
  }
}
