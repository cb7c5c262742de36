package dev.once.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.events.cloud.storage.v1.StorageObjectData;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.once.entry.MalformedEvent;
import dev.once.pipeline.DocumentSource;
import io.cloudevents.CloudEvent;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Reads a GCS "object finalized" CloudEvent into the document it names, or says why it cannot. */
final class StorageEvents {
  static final String FINALIZED = "google.cloud.storage.object.v1.finalized";
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

  private StorageEvents() {}

  static DocumentSource read(CloudEvent event) throws MalformedEvent {
    if (!FINALIZED.equals(event.getType())) {
      throw new MalformedEvent("event type " + event.getType() + " is not " + FINALIZED);
    }
    if (event.getData() == null) {
      throw new MalformedEvent("event " + event.getId() + " has no data");
    }
    String json = utf8(event);
    String what = "event " + event.getId() + " data";
    JsonNode shape = JsonShapes.object(json, what);
    JsonShapes.strings(shape, what, "bucket", "name", "contentType", "md5Hash", "crc32c");
    JsonShapes.integers(shape, what, "generation", "metageneration", "size");
    StorageObjectData.Builder data = StorageObjectData.newBuilder();
    try {
      PARSER.merge(json, data);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw new MalformedEvent("event " + event.getId() + " data is not a storage object: " + firstLine(e.getMessage()));
    }
    if (data.getBucket().isBlank() || data.getName().isEmpty() || data.getGeneration() <= 0) {
      throw new MalformedEvent("event " + event.getId() + " lacks bucket, name or generation");
    }
    String refusal = ObjectNames.refusal(data.getBucket(), data.getName());
    if (refusal != null) {
      throw new MalformedEvent("event " + event.getId() + ": " + refusal);
    }
    return new DocumentSource(data.getBucket(), data.getName(), data.getGeneration(), data.getContentType(),
        data.getSize(), data.getMd5Hash(), data.getCrc32C(),
        "true".equalsIgnoreCase(data.getMetadataMap().getOrDefault(DocumentSource.REANALYSE, "").strip()));
  }

  /** The event's data as text; bytes that are not UTF-8 make the event malformed rather than silently replaced. */
  static String utf8(CloudEvent event) throws MalformedEvent {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(event.getData().toBytes()))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedEvent("event " + event.getId() + " data is not UTF-8");
    }
  }

  static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    String line = message.lines().findFirst().orElse("");
    return line.length() <= 200 ? line : line.substring(0, 200) + "…";
  }
}
