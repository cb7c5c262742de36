package dev.once.wire.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The JSON API object resource, field for field as GCS writes it: int64 values (generation, metageneration,
 * size) as strings, hashes in base64, times in RFC 3339 with milliseconds. The same JSON is the data of an
 * {@code object.finalize} notification and of the Eventarc {@code StorageObjectData}.
 */
public final class ObjectResource {
  private static final DateTimeFormatter RFC3339 =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private ObjectResource() {}

  /** A time as GCS writes one in a resource: RFC 3339 in UTC, with milliseconds. */
  public static String time(Instant instant) {
    return RFC3339.format(instant);
  }

  public static ObjectNode toJson(StoredObject o, String baseUrl) {
    String encodedName = URLEncoder.encode(o.name(), StandardCharsets.UTF_8).replace("+", "%20");
    ObjectNode node = Json.object();
    node.put("kind", "storage#object");
    node.put("id", o.bucket() + "/" + o.name() + "/" + o.generation());
    node.put("selfLink", baseUrl + "/storage/v1/b/" + o.bucket() + "/o/" + encodedName);
    node.put("mediaLink", baseUrl + "/download/storage/v1/b/" + o.bucket() + "/o/" + encodedName
        + "?generation=" + o.generation() + "&alt=media");
    node.put("name", o.name());
    node.put("bucket", o.bucket());
    node.put("generation", Long.toString(o.generation()));
    node.put("metageneration", Long.toString(o.metageneration()));
    node.put("contentType", o.contentType());
    node.put("storageClass", "STANDARD");
    node.put("size", Long.toString(o.size()));
    node.put("md5Hash", o.md5Hash());
    node.put("crc32c", o.crc32c());
    node.put("etag", o.etag());
    if (o.contentEncoding() != null) {
      node.put("contentEncoding", o.contentEncoding());
    }
    if (o.cacheControl() != null) {
      node.put("cacheControl", o.cacheControl());
    }
    if (o.contentDisposition() != null) {
      node.put("contentDisposition", o.contentDisposition());
    }
    node.put("timeCreated", time(o.timeCreated()));
    node.put("updated", time(o.updated()));
    node.put("timeStorageClassUpdated", time(o.timeCreated()));
    node.put("timeFinalized", time(o.timeCreated()));
    if (!o.metadata().isEmpty()) {
      ObjectNode metadata = node.putObject("metadata");
      o.metadata().forEach(metadata::put);
    }
    return node;
  }
}
