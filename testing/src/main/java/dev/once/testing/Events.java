package dev.once.testing;

import dev.once.wire.eventarc.PubSubEvents;
import dev.once.wire.eventarc.StorageEvents;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.storage.ObjectFinalized;
import dev.once.wire.storage.ObjectResource;
import dev.once.wire.storage.StoredObject;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The events a function receives, in the shapes Google's services really send them, for its unit tests: made by the
 * same code as this project's local stand-ins (the Eventarc relay, the Cloud Storage and Gemini stand-ins), quirks
 * included — a Pub/Sub event's {@code message_id} and {@code publish_time} twins, a storage object's int64 values as
 * strings, a Gemini webhook signed as Standard Webhooks sign.
 *
 * <pre>{@code
 * CloudEvent signup = Events.pubSub().attribute("userId", "u-42").json("{\"email\":\"ada@example.com\"}").build();
 * CloudEvent upload = Events.storage("inbox", "march/invoice.pdf").contentType("application/pdf").build();
 * }</pre>
 */
public final class Events {
  private static final AtomicLong IDS = new AtomicLong(1_000_000);

  private Events() {}

  /** A {@code google.cloud.pubsub.topic.v1.messagePublished} event, as Eventarc delivers a message of a topic. */
  public static PubSub pubSub() {
    return new PubSub();
  }

  /** A {@code google.cloud.storage.object.v1.finalized} event for a new object generation. */
  public static Storage storage(String bucket, String name) {
    return new Storage(bucket, name);
  }

  /** The HTTP request a Gemini API batch webhook makes when the job {@code batch} ({@code batches/…}) ends. */
  public static GeminiWebhook geminiWebhook(String batch) {
    return new GeminiWebhook(batch);
  }

  /** A Pub/Sub message, published to a topic and pushed by Eventarc. */
  public static final class PubSub {
    private String messageId = Long.toString(IDS.incrementAndGet());
    private byte[] data = new byte[0];
    private final Map<String, String> attributes = new LinkedHashMap<>();
    private String topic = "projects/once-test/topics/events";
    private String orderingKey = "";
    private Instant published = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    private PubSub() {}

    /** The message id, the same on every delivery of one message (default: a fresh one). */
    public PubSub messageId(String value) {
      messageId = value;
      return this;
    }

    public PubSub data(byte[] value) {
      data = value.clone();
      return this;
    }

    /** The message's data, UTF-8 JSON (or any text). */
    public PubSub json(String value) {
      return data(value.getBytes(StandardCharsets.UTF_8));
    }

    public PubSub attribute(String name, String value) {
      attributes.put(name, value);
      return this;
    }

    /** The full topic name, {@code projects/P/topics/T}. */
    public PubSub topic(String value) {
      topic = value;
      return this;
    }

    public PubSub orderingKey(String value) {
      orderingKey = value;
      return this;
    }

    public PubSub publishedAt(Instant value) {
      published = value;
      return this;
    }

    public CloudEvent build() {
      String subscription = topic.replace("/topics/", "/subscriptions/") + "-eventarc";
      return cloudEvent(PubSubEvents.messagePublished(messageId, attributes, data, orderingKey,
          published.truncatedTo(ChronoUnit.MILLIS), subscription, topic));
    }
  }

  /** A new object generation, finalized in a bucket. */
  public static final class Storage {
    private final String bucket;
    private final String name;
    private long generation = System.currentTimeMillis() * 1000;
    private String contentType = "application/octet-stream";
    private byte[] data = new byte[0];
    private Instant written = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    private Storage(String bucket, String name) {
      this.bucket = bucket;
      this.name = name;
    }

    /** The generation, which makes a re-upload a new event (default: from the time, as GCS's are). */
    public Storage generation(long value) {
      generation = value;
      return this;
    }

    public Storage contentType(String value) {
      contentType = value;
      return this;
    }

    /** The object's bytes: its size and checksums in the event (the event never carries the bytes). */
    public Storage data(byte[] value) {
      data = value.clone();
      return this;
    }

    public Storage writtenAt(Instant value) {
      written = value;
      return this;
    }

    public CloudEvent build() {
      StoredObject object = StoredObject.of(bucket, name, generation, contentType, data, written);
      String json = ObjectResource.toJson(object, "https://storage.googleapis.com").toString();
      ObjectFinalized finalized = new ObjectFinalized(Long.toString(IDS.incrementAndGet()), written, bucket, name,
          generation, json);
      return cloudEvent(StorageEvents.finalized(finalized));
    }
  }

  /**
   * A batch job's webhook: {@code {"type":"batch.succeeded","version":"v1","timestamp":…,"data":{"id":…}}} with the
   * Standard Webhooks headers ({@code webhook-id}, {@code webhook-timestamp}, {@code webhook-signature}) that a
   * static webhook's {@code whsec_} secret signs.
   */
  public static final class GeminiWebhook {
    private final String batch;
    private String type = "batch.succeeded";
    private String secret = WebhookSigner.newSecret();
    private String webhookId = "msg_" + UUID.randomUUID().toString().replace("-", "");
    private Instant sent = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    private GeminiWebhook(String batch) {
      this.batch = batch;
    }

    /** {@code batch.succeeded} (the default), {@code batch.failed}, {@code batch.cancelled} or {@code batch.expired}. */
    public GeminiWebhook type(String value) {
      type = value;
      return this;
    }

    /** The {@code whsec_…} secret it is signed with (default: a fresh one, {@link #secret()}). */
    public GeminiWebhook signedWith(String value) {
      secret = value;
      return this;
    }

    /** The delivery's id: the same on every retry of one delivery. */
    public GeminiWebhook webhookId(String value) {
      webhookId = value;
      return this;
    }

    public GeminiWebhook sentAt(Instant value) {
      sent = value;
      return this;
    }

    public String secret() {
      return secret;
    }

    public byte[] body() {
      return ("{\"type\":\"" + type + "\",\"version\":\"v1\",\"timestamp\":\"" + sent + "\",\"data\":{\"id\":\""
          + batch + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    /** The POST as the webhook's receiver gets it. */
    public FakeHttp.Request request() {
      byte[] body = body();
      return FakeHttp.post("/", body)
          .header("Content-Type", "application/json")
          .header("webhook-id", webhookId)
          .header("webhook-timestamp", Long.toString(sent.getEpochSecond()))
          .header("webhook-signature", WebhookSigner.fromSecret(secret).sign(webhookId, sent.getEpochSecond(), body));
    }
  }

  /** The stand-ins' event as the SDK's {@link CloudEvent}, what a function's {@code accept} takes. */
  private static CloudEvent cloudEvent(dev.once.wire.eventarc.CloudEvent event) {
    CloudEventBuilder builder = CloudEventBuilder.v1().withId(event.id()).withSource(URI.create(event.source()))
        .withType(event.type()).withData(event.dataContentType(), event.data());
    if (event.subject() != null) {
      builder.withSubject(event.subject());
    }
    if (event.time() != null) {
      builder.withTime(OffsetDateTime.ofInstant(event.time(), ZoneOffset.UTC));
    }
    event.extensions().forEach(builder::withExtension);
    return builder.build();
  }
}
