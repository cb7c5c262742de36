package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.effects.DocumentSource;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EventParsingTest {
  private static CloudEvent event(String type, String data) {
    CloudEventBuilder builder = CloudEventBuilder.v1().withId("1").withSource(URI.create("//test")).withType(type);
    if (data != null) {
      builder.withData("application/json", data.getBytes(StandardCharsets.UTF_8));
    }
    return builder.build();
  }

  @Test
  void storageEvent_asGcsSendsIt_becomesItsDocument() throws Exception {
    DocumentSource document = StorageEvents.read(event(StorageEvents.FINALIZED, """
        {"bucket":"inbox","name":"a/b.pdf","generation":"1700000000000001","metageneration":"1",
         "contentType":"application/pdf","size":"1234","md5Hash":"bWQ1","crc32c":"AAAAAA==","timeCreated":"2026-11-30T00:00:00Z",
         "somethingNew":{"x":1}}"""));
    assertEquals(new DocumentSource("inbox", "a/b.pdf", 1700000000000001L, "application/pdf", 1234, "bWQ1", "AAAAAA=="),
        document);
    assertEquals("md5:bWQ1", document.fingerprint());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "{", "[]", "null", "{\"bucket\":\"b\",\"name\":\"n\"}", "{\"bucket\":\"b\",\"generation\":\"1\"}",
      "{\"name\":\"n\",\"generation\":\"1\"}", "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"x\"}",
      "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"-4\"}", "{\"bucket\":7,\"name\":{},\"generation\":\"1\"}"})
  void brokenStorageData_isMalformed(String data) {
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED, data)));
  }

  @Test
  void wrongTypeOrNoData_isMalformed() {
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event("google.cloud.storage.object.v1.deleted", "{}")));
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED, null)));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(StorageEvents.FINALIZED, "{}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, null)));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, "{\"subscription\":\"s\"}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, "{\"message\":{\"data\":\"%%\"}}")));
  }

  @Test
  void pubSubEvent_asEventarcWrapsIt_becomesItsMessage() throws Exception {
    PubSubEvents.Message message = PubSubEvents.read(event(PubSubEvents.PUBLISHED, """
        {"message":{"data":"eyJhIjoxfQ==","attributes":{"idempotency_key":"gcs:b/n#1"},"messageId":"42",
         "publishTime":"2026-11-30T00:00:00Z"},"subscription":"projects/p/subscriptions/s"}"""));
    assertEquals("42", message.messageId());
    assertArrayEquals("{\"a\":1}".getBytes(StandardCharsets.UTF_8), message.data());
    assertEquals(Map.of("idempotency_key", "gcs:b/n#1"), message.attributes());
  }

  @Test
  void fingerprint_ignoresJsonKeyOrder_butNotContent() {
    byte[] one = "{\"a\":1,\"b\":[1,2]}".getBytes(StandardCharsets.UTF_8);
    byte[] reordered = "{ \"b\":[1,2], \"a\":1 }".getBytes(StandardCharsets.UTF_8);
    byte[] other = "{\"a\":2,\"b\":[1,2]}".getBytes(StandardCharsets.UTF_8);
    assertEquals(DeliveryFlow.fingerprint(one), DeliveryFlow.fingerprint(reordered));
    assertNotEquals(DeliveryFlow.fingerprint(one), DeliveryFlow.fingerprint(other));
    assertTrue(DeliveryFlow.fingerprint(new byte[] {1, 2, 3}).startsWith("sha256:"));
  }

  @Test
  void contentTypes_areComparedWithoutParametersOrCase() {
    assertEquals("application/pdf", DocumentFlow.mimeType(new DocumentSource("b", "n", 1, " Application/PDF; x=y", 1, null, null)));
    assertEquals("", DocumentFlow.mimeType(new DocumentSource("b", "n", 1, null, 1, null, null)));
  }
}
