package dev.once.wire.storage;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;

/** One generation of one object: immutable once written, like GCS. */
public record StoredObject(
    String bucket,
    String name,
    long generation,
    long metageneration,
    String contentType,
    Map<String, String> metadata,
    String contentEncoding,
    String cacheControl,
    String contentDisposition,
    byte[] data,
    String md5Hash,
    String crc32c,
    Instant timeCreated,
    Instant updated) {

  public StoredObject {
    metadata = Map.copyOf(metadata);
  }

  /** A first metageneration of {@code data}, written at {@code at}, with the checksums GCS would report. */
  public static StoredObject of(String bucket, String name, long generation, String contentType, byte[] data,
      Instant at) {
    return new StoredObject(bucket, name, generation, 1, contentType, Map.of(), null, null, null, data,
        Hashes.md5(data), Hashes.crc32c(data), at, at);
  }

  public long size() {
    return data.length;
  }

  /** GCS etags are opaque; this one changes with every generation and metageneration, which is what matters. */
  public String etag() {
    return Base64.getEncoder()
        .encodeToString((generation + "/" + metageneration).getBytes(StandardCharsets.US_ASCII));
  }
}
