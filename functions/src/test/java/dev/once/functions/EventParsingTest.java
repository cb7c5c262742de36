package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.entry.MalformedEvent;
import dev.once.pipeline.DocumentSource;
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

  /** Every optional field of the object resource GCS may write, int64 values as numbers or strings: all read. */
  @ParameterizedTest
  @ValueSource(strings = {"\"1700000000000001\"", "1700000000000001"})
  void storageEvent_withEveryOptionalField_andInt64sEitherWay_isRead(String generation) throws Exception {
    DocumentSource document = StorageEvents.read(event(StorageEvents.FINALIZED, """
        {"kind":"storage#object","id":"inbox/a.pdf/1700000000000001","bucket":"inbox","name":"a.pdf",
         "generation":%s,"metageneration":1,"size":12,"componentCount":2,"contentType":"application/pdf",
         "md5Hash":"bWQ1","crc32c":"AAAAAA==","etag":"CAE=","storageClass":"STANDARD","metadata":{"k":"v"},
         "customerEncryption":{"encryptionAlgorithm":"AES256","keySha256":"x"},"kmsKeyName":"projects/p/k",
         "retentionExpirationTime":"2030-01-01T00:00:00Z","retention":{"mode":"Locked","retainUntilTime":"2030-01-01T00:00:00Z"},
         "eventBasedHold":true,"temporaryHold":false,"softDeleteTime":"2026-12-01T00:00:00Z",
         "hardDeleteTime":"2026-12-08T00:00:00Z","timeFinalized":"2026-11-30T00:00:00Z","customTime":"2026-11-30T00:00:00Z",
         "contentLanguage":"en","cacheControl":"no-cache","contentDisposition":"inline","contentEncoding":"identity",
         "owner":{"entity":"user-x"},"acl":[],"timeCreated":"2026-11-30T00:00:00.000Z","updated":"2026-11-30T00:00:00.000Z"}"""
        .formatted(generation)));
    assertEquals(new DocumentSource("inbox", "a.pdf", 1700000000000001L, "application/pdf", 12, "bWQ1", "AAAAAA=="),
        document);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "{", "[]", "null", "{\"bucket\":\"b\",\"name\":\"n\"}", "{\"bucket\":\"b\",\"generation\":\"1\"}",
      "{\"name\":\"n\",\"generation\":\"1\"}", "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"x\"}",
      "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"-4\"}", "{\"bucket\":7,\"name\":{},\"generation\":\"1\"}",
      "{\"bucket\":\"inbox\",\"name\":[\"a\"],\"generation\":\"1\"}", "{\"bucket\":7,\"name\":\"a\",\"generation\":\"1\"}",
      "{\"bucket\":\"inbox\",\"name\":\"a\",\"generation\":1.5}", "{\"bucket\":\"inbox\",\"name\":\"a\",\"generation\":\"1\",\"size\":true}"})
  void brokenStorageData_isMalformed(String data) {
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED, data)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"..", ".", "a\nb", "a\rb", "a\u0000b", "a\u001bb", "a\u0085b", "\ud800x",
      ".well-known/acme-challenge/x"})
  void namesCloudStorageWouldNotHave_areMalformed(String name) {
    String data = "{\"bucket\":\"inbox\",\"name\":\"" + name.replace("\\", "\\\\")
        .replace("\n", "\\n").replace("\r", "\\r").replace("\u0000", "\\u0000").replace("\u001b", "\\u001b")
        .replace("\u0085", "\\u0085").replace("\ud800", "\\ud800") + "\",\"generation\":\"1\"}";
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED, data)), data);
  }

  @ParameterizedTest
  @ValueSource(strings = {"A", "ab", "Inbox", "in box", "-inbox", "inbox-", "in..box", "in/box"})
  void bucketsCloudStorageWouldNotHave_areMalformed(String bucket) {
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED,
        "{\"bucket\":\"" + bucket + "\",\"name\":\"a.pdf\",\"generation\":\"1\"}")));
  }

  @Test
  void ordinaryNames_includingDotsSlashesAndAnyScript_areAccepted() throws Exception {
    for (String name : new String[] {"a/../b.pdf", "factura ñ 請求書.pdf", "x".repeat(1024), "😀.png", "./a"}) {
      assertEquals(name, StorageEvents.read(event(StorageEvents.FINALIZED,
          "{\"bucket\":\"in.box_2\",\"name\":\"" + name + "\",\"generation\":\"1\"}")).name());
    }
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED,
        "{\"bucket\":\"inbox\",\"name\":\"" + "x".repeat(1025) + "\",\"generation\":\"1\"}")));
  }

  @Test
  void dataThatIsNotUtf8_isMalformed() {
    byte[] bytes = {'{', '"', 'b', 'u', 'c', 'k', 'e', 't', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
    CloudEvent bad = CloudEventBuilder.v1().withId("1").withSource(URI.create("//test")).withType(StorageEvents.FINALIZED)
        .withData("application/json", bytes).build();
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(bad));
  }

  @Test
  void wrongTypeOrNoData_isMalformed() {
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event("google.cloud.storage.object.v1.deleted", "{}")));
    assertThrows(MalformedEvent.class, () -> StorageEvents.read(event(StorageEvents.FINALIZED, null)));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(StorageEvents.FINALIZED, "{}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, null)));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, "{\"subscription\":\"s\"}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED, "{\"message\":{\"data\":\"%%\"}}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":1}}")));
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":\"1\",\"attributes\":{\"idempotency_key\":[\"k\"]}}}")));
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

  /** The payload googleapis/google-cloudevents issue 151 captured from a real Eventarc delivery: both spellings. */
  @Test
  void pubSubEvent_withSnakeCaseTwins_asEventarcReallySendsIt_becomesItsMessage() throws Exception {
    PubSubEvents.Message message = PubSubEvents.read(event(PubSubEvents.PUBLISHED, """
        {"message":{"data":"RG8gdGhhdCB0aGluZywgeW8hIEkgbG92ZSBpdA==","messageId":"1981947010177954",
         "message_id":"1981947010177954","publishTime":"2021-02-05T04:06:14.109Z","publish_time":"2021-02-05T04:06:14.109Z"},
         "subscription":"projects/kevmoo-firebase3-test/subscriptions/eventarc-us-central1-events-pubsub-trigger-sub-072"}"""));
    assertEquals("1981947010177954", message.messageId());
    assertEquals("Do that thing, yo! I love it", new String(message.data(), StandardCharsets.UTF_8));
    assertEquals(Map.of(), message.attributes());
  }

  @Test
  void pubSubEvent_withOnlyTheSnakeCaseSpelling_orAnOrderingKey_isRead() throws Exception {
    assertEquals("7", PubSubEvents.read(event(PubSubEvents.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"message_id\":\"7\",\"publish_time\":\"2026-11-30T00:00:00Z\"}}")).messageId());
    assertEquals("8", PubSubEvents.read(event(PubSubEvents.PUBLISHED, "{\"message\":{\"data\":\"e30=\",\"messageId\":\"8\","
        + "\"message_id\":\"8\",\"orderingKey\":\"k\",\"ordering_key\":\"k\",\"attributes\":{\"a\":\"b\"}}}")).messageId());
  }

  /** Twins that disagree (no real delivery does): the camelCase field, the schema's JSON name, is used. */
  @Test
  void pubSubEvent_whoseTwinsDisagree_usesTheCamelCaseField() throws Exception {
    assertEquals("camel", PubSubEvents.read(event(PubSubEvents.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"message_id\":\"snake\",\"messageId\":\"camel\"}}")).messageId());
    assertThrows(MalformedEvent.class, () -> PubSubEvents.read(event(PubSubEvents.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":\"1\",\"message_id\":1}}")));
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
