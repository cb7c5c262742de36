package dev.once.entry;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.events.cloud.storage.v1.StorageObjectData;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.once.internal.entry.EventJson;
import dev.once.internal.entry.StorageNames;
import dev.once.key.IdempotencyKey;
import dev.once.key.StorageObjectKeys;
import io.cloudevents.CloudEvent;
import java.util.Map;

/**
 * The object a Cloud Storage "object finalized" CloudEvent names, as Eventarc delivers it: the object resource as
 * Cloud Storage writes it (int64 values as decimal strings or JSON numbers), each field's JSON type checked, and the
 * bucket and object name held to what Cloud Storage allows (control characters, {@code ..} and the like refused),
 * so a forged or broken event is a {@link MalformedEvent} before anything is read or written.
 *
 * @param size the object's size in bytes, as the event says (0 when absent)
 * @param md5Hash the base64 MD5 the event carries, or empty
 * @param crc32c the base64 CRC32C the event carries, or empty
 * @param metadata the object's custom metadata (empty when it has none)
 */
public record StorageObject(String bucket, String name, long generation, String contentType, long size,
    String md5Hash, String crc32c, Map<String, String> metadata) {
  /** The CloudEvent type of a finalized (written) object. */
  public static final String FINALIZED = "google.cloud.storage.object.v1.finalized";
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

  public StorageObject {
    metadata = Map.copyOf(metadata);
  }

  /** The object the event names, or why no delivery of it can be processed. */
  public static StorageObject from(CloudEvent event) throws MalformedEvent {
    if (!FINALIZED.equals(event.getType())) {
      throw new MalformedEvent("event type " + event.getType() + " is not " + FINALIZED);
    }
    String json = EventJson.utf8(event);
    String what = "event " + event.getId() + " data";
    JsonNode shape = EventJson.object(json, what);
    EventJson.strings(shape, what, "bucket", "name", "contentType", "md5Hash", "crc32c");
    EventJson.integers(shape, what, "generation", "metageneration", "size");
    StorageObjectData.Builder data = StorageObjectData.newBuilder();
    try {
      PARSER.merge(json, data);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw new MalformedEvent("event " + event.getId() + " data is not a storage object: "
          + EventJson.firstLine(e.getMessage()));
    }
    if (data.getBucket().isBlank() || data.getName().isEmpty() || data.getGeneration() <= 0) {
      throw new MalformedEvent("event " + event.getId() + " lacks bucket, name or generation");
    }
    String refusal = StorageNames.refusal(data.getBucket(), data.getName());
    if (refusal != null) {
      throw new MalformedEvent("event " + event.getId() + ": " + refusal);
    }
    return new StorageObject(data.getBucket(), data.getName(), data.getGeneration(), data.getContentType(),
        data.getSize(), data.getMd5Hash(), data.getCrc32C(), data.getMetadataMap());
  }

  /**
   * This generation's key, {@code gcs:{bucket}/{name}#{generation}}: a doubled notification is the same event, a
   * re-upload (a new generation) a new one.
   */
  public IdempotencyKey key() {
    return StorageObjectKeys.of(bucket, name, generation);
  }
}
