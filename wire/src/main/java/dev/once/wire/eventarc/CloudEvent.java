package dev.once.wire.eventarc;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A CloudEvent as Eventarc delivers it in binary mode: the attributes travel as {@code ce-*} headers, the data is
 * the HTTP body with {@code dataContentType} as its Content-Type. {@code subject} may be null (Pub/Sub events
 * have none); {@code extensions} are further {@code ce-<name>} attributes.
 */
public record CloudEvent(
    String id, String source, String type, String subject, Instant time, String dataContentType, byte[] data,
    Map<String, String> extensions) {

  public static final String STORAGE_FINALIZED = "google.cloud.storage.object.v1.finalized";
  public static final String PUBSUB_PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished";

  public CloudEvent {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(type, "type");
    extensions = Map.copyOf(extensions);
    data = data == null ? new byte[0] : data;
  }

  public String dataText() {
    return new String(data, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "CloudEvent[id=" + id + ", type=" + type + ", source=" + source + ", subject=" + subject + "]";
  }
}
