package dev.once.local.eventarc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.NoCredentials;
import com.google.cloud.functions.invoker.runner.Invoker;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.events.cloud.storage.v1.StorageObjectData;
import com.google.protobuf.util.JsonFormat;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FreePort;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.http.RetryPolicy;
import dev.once.local.storage.StorageStandIn;
import io.cloudevents.CloudEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Events from the storage stand-in and from the Pub/Sub emulator reach CloudEvent functions run by the real
 * Functions Framework invoker, with Eventarc's ce-* attributes and data that the official event types parse.
 */
class EventarcRelayTest {
  private static final String PROJECT = "demo-project";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static final RetryPolicy FAST = new RetryPolicy(3, Duration.ofSeconds(30), Duration.ofMillis(10),
      Duration.ofMillis(50), 2.0);
  private static final List<Invoker> INVOKERS = new ArrayList<>();
  private static URI recording;
  private static URI failsTwice;
  private static URI alwaysFails;
  private static StorageStandIn storage;
  private static Storage storageClient;
  private static EventarcRelay relay;

  @BeforeAll
  static void start() throws Exception {
    recording = invoker(RecordingFunctions.Recording.class);
    failsTwice = invoker(RecordingFunctions.FailsTwice.class);
    alwaysFails = invoker(RecordingFunctions.AlwaysFails.class);
    storage = StorageStandIn.start();
    storageClient = StorageOptions.http().setHost(storage.endpoint()).setProjectId(PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
    relay = EventarcRelay.start(EventarcRelay.Options.defaults().withRetry(FAST)
        .withPubSubEmulatorHost(PubSubEmulator.shared().hostPort()))
        .attach(storage)
        .route(dev.once.wire.eventarc.CloudEvent.STORAGE_FINALIZED, recording)
        .route(dev.once.wire.eventarc.CloudEvent.PUBSUB_PUBLISHED, recording)
        .route("test.fails.twice", failsTwice)
        .route("test.always.fails", alwaysFails);
  }

  @AfterAll
  static void stop() throws Exception {
    relay.close();
    storageClient.close();
    storage.close();
    for (Invoker invoker : INVOKERS) {
      invoker.stopServer();
    }
  }

  private static URI invoker(Class<?> function) throws Exception {
    int port = FreePort.pick();
    Invoker invoker = new Invoker(port, function.getName(), "cloudevent", EventarcRelayTest.class.getClassLoader());
    invoker.startTestServer();
    INVOKERS.add(invoker);
    return URI.create("http://127.0.0.1:" + port + "/");
  }

  private static CloudEvent received(String what, Predicate<CloudEvent> match) {
    return Await.value(Bounds.CALL,
        () -> RecordingFunctions.Recording.RECEIVED.stream().filter(match).findFirst(), what);
  }

  private static List<CloudEvent> allReceived(Predicate<CloudEvent> match) {
    return RecordingFunctions.Recording.RECEIVED.stream().filter(match).toList();
  }

  private static dev.once.wire.eventarc.CloudEvent synthetic(String type) {
    return new dev.once.wire.eventarc.CloudEvent("evt-" + NAMES.incrementAndGet(), "//test/source", type,
        "things/1", Instant.now(), "application/json", "{}".getBytes(StandardCharsets.UTF_8), Map.of());
  }

  @Test
  void storageFinalize_reachesTheFunction_asEventarcSendsIt() throws Exception {
    String bucket = "relay-" + NAMES.incrementAndGet();
    Blob blob = storageClient.create(BlobInfo.newBuilder(bucket, "in/doc.pdf").setContentType("application/pdf")
        .build(), "%PDF".getBytes(StandardCharsets.UTF_8));

    CloudEvent event = received("the finalize event", e -> e.getSource().toString().endsWith("/buckets/" + bucket));

    String notificationId = storage.notifications().stream().filter(n -> n.bucket().equals(bucket)).findFirst()
        .orElseThrow().eventId();
    assertEquals(notificationId, event.getId());
    assertEquals("google.cloud.storage.object.v1.finalized", event.getType());
    assertEquals("//storage.googleapis.com/projects/_/buckets/" + bucket, event.getSource().toString());
    assertEquals("objects/in/doc.pdf", event.getSubject());
    assertEquals(bucket, event.getExtension("bucket"), "the ce-bucket extension Eventarc sets");
    assertEquals("1.0", event.getSpecVersion().toString());
    assertEquals("application/json", event.getDataContentType());
    assertTrue(event.getTime() != null);
    StorageObjectData.Builder data = StorageObjectData.newBuilder();
    JsonFormat.parser().ignoringUnknownFields().merge(new String(event.getData().toBytes(), StandardCharsets.UTF_8),
        data);
    assertEquals(bucket, data.getBucket());
    assertEquals("in/doc.pdf", data.getName());
    assertEquals(blob.getGeneration().longValue(), data.getGeneration());
    assertEquals(4, data.getSize());
    assertEquals("application/pdf", data.getContentType());
    assertEquals(blob.getMd5(), data.getMd5Hash());
    // The object resource as Cloud Storage writes it: every field, int64 values as strings.
    JsonNode resource = JSON.readTree(event.getData().toBytes());
    for (String field : List.of("kind", "id", "selfLink", "mediaLink", "name", "bucket", "generation", "metageneration",
        "contentType", "storageClass", "size", "md5Hash", "crc32c", "etag", "timeCreated", "updated",
        "timeStorageClassUpdated")) {
      assertTrue(resource.path(field).isTextual(), field + " in " + resource);
    }
    assertEquals("storage#object", resource.path("kind").asText());
    assertEquals(bucket + "/in/doc.pdf/" + blob.getGeneration(), resource.path("id").asText());
  }

  @Test
  void doubledStorageNotification_reachesTheFunctionTwice_withDifferentIds_sameGeneration() {
    String bucket = "relay-" + NAMES.incrementAndGet();
    Blob blob = storageClient.create(BlobInfo.newBuilder(bucket, "doc").build(), new byte[] {1});
    storage.renotify(bucket, "doc", blob.getGeneration());

    Await.until(Bounds.CALL, () -> allReceived(e -> e.getSubject() != null
        && e.getSource().toString().endsWith("/buckets/" + bucket)).size() == 2, "two finalize events");
    List<CloudEvent> both = allReceived(e -> e.getSource().toString().endsWith("/buckets/" + bucket));
    assertNotEquals(both.get(0).getId(), both.get(1).getId());
    assertTrue(new String(both.get(1).getData().toBytes(), StandardCharsets.UTF_8)
        .contains("\"generation\":\"" + blob.getGeneration() + "\""));
  }

  @Test
  void storageNotification_overHttp_fromAStandInInAnotherProcess() throws Exception {
    try (StorageStandIn remote = StorageStandIn.start(StorageStandIn.Options.defaults()
        .withNotifyUrl(relay.storageIngestUrl()))) {
      String bucket = "remote-" + NAMES.incrementAndGet();
      HttpResponse<String> upload = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create(remote.baseUrl()
              + "/upload/storage/v1/b/" + bucket + "/o?uploadType=media&name=doc.txt"))
              .timeout(Duration.ofSeconds(10)).header("Content-Type", "text/plain")
              .POST(HttpRequest.BodyPublishers.ofString("hello")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, upload.statusCode(), upload.body());

      CloudEvent event = received("the forwarded finalize event",
          e -> e.getSource().toString().endsWith("/buckets/" + bucket));
      assertEquals(remote.notifications().get(0).eventId(), event.getId());
      assertEquals("objects/doc.txt", event.getSubject());
    }
  }

  @Test
  void pubSubMessage_reachesTheFunction_wrappedAsEventarcDoes_andCanBeRedelivered() throws Exception {
    int n = NAMES.incrementAndGet();
    String topic = "results-" + n;
    String subscription = "relay-" + n;
    try (PubSubTestSupport pubsub = new PubSubTestSupport(PubSubEmulator.shared().hostPort())) {
      pubsub.createTopicAndSubscription(PROJECT, topic, subscription);
      PubSubSource source = relay.subscribe("projects/" + PROJECT + "/subscriptions/" + subscription);
      assertEquals("projects/" + PROJECT + "/topics/" + topic, source.topic());
      String messageId = pubsub.publish(PROJECT, topic, "hello", Map.of("idempotency_key", "k-" + n));

      assertDeliveredAsEventarcDoes(received("the messagePublished event", e -> e.getId().equals(messageId)),
          messageId, topic, subscription, Map.of("idempotency_key", "k-" + n));
      String bare = pubsub.publish(PROJECT, topic, "hello", Map.of());
      assertDeliveredAsEventarcDoes(received("the event of a message without attributes", e -> e.getId().equals(bare)),
          bare, topic, subscription, Map.of());

      Optional<?> again = relay.redeliver(messageId);
      assertTrue(again.isPresent());
      Await.until(Bounds.CALL, () -> allReceived(e -> e.getId().equals(messageId)).size() == 2,
          "the redelivered message");
      Await.until(Bounds.CALL, () -> relay.results().stream().filter(r -> r.eventId().equals(messageId))
          .count() == 2 && relay.results().stream().anyMatch(r -> r.eventId().equals(bare)), "the deliveries to end");
      source.close();
      assertEquals(0, pubsub.pullNow(PROJECT, subscription), "the delivered message was acked");
    }
  }

  /**
   * The envelope as Pub/Sub writes it for Eventarc: the snake_case twins beside messageId and publishTime
   * (googleapis/google-cloudevents issue 151), attributes only when there are some; ce-id and ce-time repeat the
   * message's id and publish time.
   */
  private static void assertDeliveredAsEventarcDoes(CloudEvent event, String messageId, String topic,
      String subscription, Map<String, String> attributes) throws Exception {
    assertEquals("google.cloud.pubsub.topic.v1.messagePublished", event.getType());
    assertEquals("//pubsub.googleapis.com/projects/" + PROJECT + "/topics/" + topic, event.getSource().toString());
    assertEquals(messageId, event.getId());
    assertNull(event.getSubject());
    assertEquals("application/json", event.getDataContentType());
    JsonNode data = JSON.readTree(event.getData().toBytes());
    JsonNode message = data.path("message");
    assertEquals("projects/" + PROJECT + "/subscriptions/" + subscription, data.path("subscription").asText());
    assertEquals("hello",
        new String(Base64.getDecoder().decode(message.path("data").asText()), StandardCharsets.UTF_8));
    assertEquals(messageId, message.path("messageId").asText());
    assertEquals(messageId, message.path("message_id").asText());
    assertEquals(message.path("publishTime"), message.path("publish_time"));
    assertEquals(event.getTime().toInstant(), Instant.parse(message.path("publishTime").asText()));
    assertEquals(!attributes.isEmpty(), message.has("attributes"),
        "attributes only when the message has some: " + data);
    attributes.forEach((name, value) -> assertEquals(value, message.path("attributes").path(name).asText()));
    assertFalse(message.has("orderingKey"), "no ordering key was set");
  }

  @Test
  void aFunctionThatFailsTwice_getsTheEventThreeTimes() throws Exception {
    dev.once.wire.eventarc.CloudEvent event = synthetic("test.fails.twice");

    DeliveryResult.Outcome outcome = relay.publish(event).get(20, TimeUnit.SECONDS);

    assertEquals(DeliveryResult.Outcome.DELIVERED, outcome);
    assertEquals(3, RecordingFunctions.FailsTwice.CALLS.get(event.id()).get());
    DeliveryResult result = relay.results().stream().filter(r -> r.eventId().equals(event.id())).findFirst()
        .orElseThrow();
    assertEquals(3, result.attempts());
  }

  @Test
  void aFunctionThatAlwaysFails_makesTheRelayGiveUp_countedAndLogged() throws Exception {
    List<LogRecord> logged = new CopyOnWriteArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        logged.add(record);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger logger = Logger.getLogger(Deliverer.class.getName());
    logger.addHandler(capture);
    long gaveUpBefore = relay.gaveUp();
    try {
      dev.once.wire.eventarc.CloudEvent event = synthetic("test.always.fails");

      DeliveryResult.Outcome outcome = relay.publish(event).get(20, TimeUnit.SECONDS);

      assertEquals(DeliveryResult.Outcome.GAVE_UP, outcome);
      assertEquals(FAST.maxAttempts(), RecordingFunctions.AlwaysFails.CALLS.get(event.id()).get());
      assertEquals(gaveUpBefore + 1, relay.gaveUp());
      assertTrue(logged.stream().anyMatch(r -> r.getLevel() == Level.WARNING
          && r.getMessage().contains(event.id()) && r.getMessage().contains("gave up")), "a logged give-up");
    } finally {
      logger.removeHandler(capture);
    }
  }

  @Test
  void anEventWithoutARoute_isCountedAsUnrouted() throws Exception {
    long before = relay.counters().get("unrouted");
    assertEquals(DeliveryResult.Outcome.UNROUTED,
        relay.publish(synthetic("test.nobody.listens")).get(5, TimeUnit.SECONDS));
    assertEquals(before + 1, relay.counters().get("unrouted"));
  }

  /** Each Eventarc Pub/Sub trigger names its topic: a message reaches the function of its own topic only. */
  @Test
  void aPubSubTrigger_getsTheMessagesOfItsTopicOnly() throws Exception {
    try (EventarcRelay triggers = EventarcRelay.start(EventarcRelay.Options.defaults().withRetry(FAST))) {
      triggers.routeTopic("projects/p/topics/results", recording).routeTopic("projects/p/topics/completions",
          alwaysFails);

      assertEquals(DeliveryResult.Outcome.DELIVERED,
          triggers.publish(published("projects/p/topics/results")).get(20, TimeUnit.SECONDS));
      assertEquals(DeliveryResult.Outcome.GAVE_UP,
          triggers.publish(published("projects/p/topics/completions")).get(20, TimeUnit.SECONDS));
      assertEquals(DeliveryResult.Outcome.UNROUTED,
          triggers.publish(published("projects/p/topics/other")).get(20, TimeUnit.SECONDS));
      assertEquals(1, triggers.results().stream().filter(r -> r.outcome() == DeliveryResult.Outcome.DELIVERED).count());
    }
  }

  private static dev.once.wire.eventarc.CloudEvent published(String topic) {
    return new dev.once.wire.eventarc.CloudEvent("msg-" + NAMES.incrementAndGet(), "//pubsub.googleapis.com/" + topic,
        dev.once.wire.eventarc.CloudEvent.PUBSUB_PUBLISHED, null, Instant.now(), "application/json",
        "{\"message\":{\"messageId\":\"1\"},\"subscription\":\"s\"}".getBytes(StandardCharsets.UTF_8), Map.of());
  }
}
