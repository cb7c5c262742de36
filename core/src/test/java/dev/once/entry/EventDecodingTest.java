package dev.once.entry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.testing.Events;
import dev.once.testing.GoogleSamples;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pub/Sub and Cloud Storage events as Eventarc delivers them, read into what they carry, and everything else refused
 * as malformed: the decoders' JSON type checks, Cloud Storage's naming rules, the message_id twins.
 */
class EventDecodingTest {
  private static CloudEvent event(String type, String data) {
    CloudEventBuilder builder = CloudEventBuilder.v1().withId("1").withSource(URI.create("//test")).withType(type);
    if (data != null) {
      builder.withData("application/json", data.getBytes(StandardCharsets.UTF_8));
    }
    return builder.build();
  }

  @Test
  void storageEvent_asGcsSendsIt_becomesItsDocument() throws Exception {
    StorageObject document = StorageObject.from(event(StorageObject.FINALIZED,
        """
            {"bucket":"inbox","name":"a/b.pdf","generation":"1700000000000001","metageneration":"1",
             "contentType":"application/pdf","size":"1234","md5Hash":"bWQ1","crc32c":"AAAAAA==","timeCreated":"2026-11-30T00:00:00Z",
             "somethingNew":{"x":1}}"""));
    assertEquals(new StorageObject("inbox", "a/b.pdf", 1700000000000001L, "application/pdf", 1234, "bWQ1", "AAAAAA==",
        Map.of()),
        document);
    assertEquals("gcs:inbox/a/b.pdf#1700000000000001", document.key().value());
  }

  /** Every optional field of the object resource GCS may write, int64 values as numbers or strings: all read. */
  @ParameterizedTest
  @ValueSource(strings = {"\"1700000000000001\"", "1700000000000001"})
  void storageEvent_withEveryOptionalField_andInt64sEitherWay_isRead(String generation) throws Exception {
    StorageObject document = StorageObject.from(event(StorageObject.FINALIZED,
        """
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
    assertEquals(new StorageObject("inbox", "a.pdf", 1700000000000001L, "application/pdf", 12, "bWQ1", "AAAAAA==",
        Map.of("k", "v")),
        document);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "{", "[]", "null", "{\"bucket\":\"b\",\"name\":\"n\"}", "{\"bucket\":\"b\",\"generation\":\"1\"}",
          "{\"name\":\"n\",\"generation\":\"1\"}", "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"x\"}",
          "{\"bucket\":\"b\",\"name\":\"n\",\"generation\":\"-4\"}", "{\"bucket\":7,\"name\":{},\"generation\":\"1\"}",
          "{\"bucket\":\"inbox\",\"name\":[\"a\"],\"generation\":\"1\"}",
          "{\"bucket\":7,\"name\":\"a\",\"generation\":\"1\"}",
          "{\"bucket\":\"inbox\",\"name\":\"a\",\"generation\":1.5}",
          "{\"bucket\":\"inbox\",\"name\":\"a\",\"generation\":\"1\",\"size\":true}"})
  void brokenStorageData_isMalformed(String data) {
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event(StorageObject.FINALIZED, data)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"..", ".", "a\nb", "a\rb", "a\u0000b", "a\u001bb", "a\u0085b", "\ud800x",
      ".well-known/acme-challenge/x"})
  void namesCloudStorageWouldNotHave_areMalformed(String name) {
    String data = "{\"bucket\":\"inbox\",\"name\":\"" + name.replace("\\", "\\\\")
        .replace("\n", "\\n").replace("\r", "\\r").replace("\u0000", "\\u0000").replace("\u001b", "\\u001b")
        .replace("\u0085", "\\u0085").replace("\ud800", "\\ud800") + "\",\"generation\":\"1\"}";
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event(StorageObject.FINALIZED, data)), data);
  }

  @ParameterizedTest
  @ValueSource(strings = {"A", "ab", "Inbox", "in box", "-inbox", "inbox-", "in..box", "in/box"})
  void bucketsCloudStorageWouldNotHave_areMalformed(String bucket) {
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event(StorageObject.FINALIZED,
        "{\"bucket\":\"" + bucket + "\",\"name\":\"a.pdf\",\"generation\":\"1\"}")));
  }

  @Test
  void ordinaryNames_includingDotsSlashesAndAnyScript_areAccepted() throws Exception {
    for (String name : new String[] {"a/../b.pdf", "factura ñ 請求書.pdf", "x".repeat(1024), "😀.png", "./a"}) {
      assertEquals(name, StorageObject.from(event(StorageObject.FINALIZED,
          "{\"bucket\":\"in.box_2\",\"name\":\"" + name + "\",\"generation\":\"1\"}")).name());
    }
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event(StorageObject.FINALIZED,
        "{\"bucket\":\"inbox\",\"name\":\"" + "x".repeat(1025) + "\",\"generation\":\"1\"}")));
  }

  @Test
  void dataThatIsNotUtf8_isMalformed() {
    byte[] bytes = {'{', '"', 'b', 'u', 'c', 'k', 'e', 't', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
    CloudEvent bad =
        CloudEventBuilder.v1().withId("1").withSource(URI.create("//test")).withType(StorageObject.FINALIZED)
            .withData("application/json", bytes).build();
    assertThrows(MalformedEvent.class, () -> StorageObject.from(bad));
  }

  @Test
  void wrongTypeOrNoData_isMalformed() {
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event("google.cloud.storage.object.v1.deleted", "{}")));
    assertThrows(MalformedEvent.class, () -> StorageObject.from(event(StorageObject.FINALIZED, null)));
    assertThrows(MalformedEvent.class, () -> PubSubMessage.from(event(StorageObject.FINALIZED, "{}")));
    assertThrows(MalformedEvent.class, () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED, null)));
    assertThrows(MalformedEvent.class,
        () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED, "{\"subscription\":\"s\"}")));
    assertThrows(MalformedEvent.class,
        () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED, "{\"message\":{\"data\":\"%%\"}}")));
    assertThrows(MalformedEvent.class, () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":1}}")));
    assertThrows(MalformedEvent.class, () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":\"1\",\"attributes\":{\"idempotency_key\":[\"k\"]}}}")));
  }

  @Test
  void pubSubEvent_asEventarcWrapsIt_becomesItsMessage() throws Exception {
    PubSubMessage message = PubSubMessage.from(event(PubSubMessage.PUBLISHED, """
        {"message":{"data":"eyJhIjoxfQ==","attributes":{"idempotency_key":"gcs:b/n#1"},"messageId":"42",
         "publishTime":"2026-11-30T00:00:00Z"},"subscription":"projects/p/subscriptions/s"}"""));
    assertEquals("42", message.messageId());
    assertArrayEquals("{\"a\":1}".getBytes(StandardCharsets.UTF_8), message.data());
    assertEquals(Map.of("idempotency_key", "gcs:b/n#1"), message.attributes());
  }

  /** The payload googleapis/google-cloudevents issue 151 captured from a real Eventarc delivery: both spellings. */
  @Test
  void pubSubEvent_withSnakeCaseTwins_asEventarcReallySendsIt_becomesItsMessage() throws Exception {
    PubSubMessage message = PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        """
            {"message":{"data":"RG8gdGhhdCB0aGluZywgeW8hIEkgbG92ZSBpdA==","messageId":"1981947010177954",
             "message_id":"1981947010177954","publishTime":"2021-02-05T04:06:14.109Z","publish_time":"2021-02-05T04:06:14.109Z"},
             "subscription":"projects/kevmoo-firebase3-test/subscriptions/eventarc-us-central1-events-pubsub-trigger-sub-072"}"""));
    assertEquals("1981947010177954", message.messageId());
    assertEquals("Do that thing, yo! I love it", new String(message.data(), StandardCharsets.UTF_8));
    assertEquals(Map.of(), message.attributes());
  }

  @Test
  void pubSubEvent_withOnlyTheSnakeCaseSpelling_orAnOrderingKey_isRead() throws Exception {
    assertEquals("7", PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"message_id\":\"7\",\"publish_time\":\"2026-11-30T00:00:00Z\"}}"))
        .messageId());
    assertEquals("8",
        PubSubMessage.from(event(PubSubMessage.PUBLISHED, "{\"message\":{\"data\":\"e30=\",\"messageId\":\"8\","
            + "\"message_id\":\"8\",\"orderingKey\":\"k\",\"ordering_key\":\"k\",\"attributes\":{\"a\":\"b\"}}}"))
            .messageId());
  }

  /** Twins that disagree (no real delivery does): the camelCase field, the schema's JSON name, is used. */
  @Test
  void pubSubEvent_whoseTwinsDisagree_usesTheCamelCaseField() throws Exception {
    assertEquals("camel", PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"message_id\":\"snake\",\"messageId\":\"camel\"}}")).messageId());
    assertThrows(MalformedEvent.class, () -> PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        "{\"message\":{\"data\":\"e30=\",\"messageId\":\"1\",\"message_id\":1}}")));
  }

  /** Google's own samples (once-testing's GoogleSamples, sources in their README), each read as Google meant it. */
  @Test
  void googlesStorageSamples_areRead() throws Exception {
    StorageObject complex = StorageObject.from(event(StorageObject.FINALIZED,
        new String(GoogleSamples.read("storage/StorageObjectData-complex.json"), StandardCharsets.UTF_8)));
    assertEquals("gcs:sample-bucket/MyFile#96883251", complex.key().value());
    StorageObject simple = StorageObject.from(event(StorageObject.FINALIZED,
        new String(GoogleSamples.read("storage/StorageObjectDataWorkflows-simple.json"), StandardCharsets.UTF_8)));
    assertEquals("gcs:my-bucket/my-file.txt#1637874272256630", simple.key().value());
    assertEquals("text/plain", simple.contentType());
  }

  @ParameterizedTest
  @ValueSource(strings = {"MessagePublishedData-binary.json", "MessagePublishedData-duplicatedFields.json",
      "MessagePublishedData-text.json", "google-cloudevents-issue-151.json"})
  void googlesPubSubSamples_areRead_twinsAndAll(String sample) throws Exception {
    PubSubMessage message = PubSubMessage.from(event(PubSubMessage.PUBLISHED,
        new String(GoogleSamples.read("pubsub/" + sample), StandardCharsets.UTF_8)));
    assertTrue(message.key().value().startsWith("pubsub:"), message.key().value());
  }

  /** The builders of once-testing make what the decoders read: the same shapes, twins included. */
  @Test
  void theKitsBuilders_makeEventsTheDecodersRead() throws Exception {
    PubSubMessage message = PubSubMessage.from(Events.pubSub().messageId("9").attribute("userId", "u-1")
        .json("{\"a\":1}").build());
    assertEquals("9", message.messageId());
    assertEquals(Map.of("userId", "u-1"), message.attributes());
    assertEquals("{\"a\":1}", new String(message.data(), StandardCharsets.UTF_8));
    StorageObject object = StorageObject.from(Events.storage("inbox", "a/b.pdf").generation(7)
        .contentType("application/pdf").data(new byte[] {1, 2, 3}).build());
    assertEquals("gcs:inbox/a/b.pdf#7", object.key().value());
    assertEquals(3, object.size());
    assertTrue(!object.md5Hash().isEmpty() && !object.crc32c().isEmpty());
  }
}
