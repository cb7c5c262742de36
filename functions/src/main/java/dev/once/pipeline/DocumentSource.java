package dev.once.pipeline;

import dev.once.entry.StorageObject;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The stored object a document event names, as its notification describes it. {@code reanalyse}: the uploader asked
 * for this generation to be analysed even if the same bytes were before (object metadata {@value #REANALYSE}).
 */
public record DocumentSource(String bucket, String name, long generation, String contentType, long size,
    String md5Hash, String crc32c, boolean reanalyse) {
  /** The custom metadata key that asks for a deliberate re-analysis of the same bytes ({@code true}). */
  public static final String REANALYSE = "once-reanalyse";

  /** A generation analysed once per content, as uploads are unless they ask otherwise. */
  public DocumentSource(
      String bucket, String name, long generation, String contentType, long size, String md5Hash, String crc32c) {
    this(bucket, name, generation, contentType, size, md5Hash, crc32c, false);
  }

  /** The object an upload event named; its metadata {@value #REANALYSE} {@code true} asks for a re-analysis. */
  public static DocumentSource of(StorageObject object) {
    return new DocumentSource(object.bucket(), object.name(), object.generation(), object.contentType(),
        object.size(), object.md5Hash(), object.crc32c(),
        "true".equalsIgnoreCase(object.metadata().getOrDefault(REANALYSE, "").strip()));
  }

  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("bucket", bucket);
    map.put("name", name);
    map.put("generation", generation);
    map.put("contentType", contentType);
    map.put("size", size);
    return map;
  }

  /** The source an analysis recorded, as {@link #toMap()} wrote it (null: none recorded). */
  static DocumentSource fromMap(Object value) {
    if (!(value instanceof Map<?, ?> map)) {
      return null;
    }
    return new DocumentSource(String.valueOf(map.get("bucket")), String.valueOf(map.get("name")),
        number(map.get("generation")), map.get("contentType") == null ? null : String.valueOf(map.get("contentType")),
        number(map.get("size")), null, null);
  }

  private static long number(Object value) {
    return value instanceof Number n ? n.longValue() : 0L;
  }

  /** The media type alone, lower-case: the content type without its parameters (blank when none was given). */
  public String mimeType() {
    String type = contentType == null ? "" : contentType;
    int parameters = type.indexOf(';');
    return (parameters < 0 ? type : type.substring(0, parameters)).strip().toLowerCase(Locale.ROOT);
  }

  /** What identifies the content of this generation, to tell a forged event from a redelivery. */
  public String fingerprint() {
    if (md5Hash != null && !md5Hash.isBlank()) {
      return "md5:" + md5Hash;
    }
    if (crc32c != null && !crc32c.isBlank()) {
      return "crc32c:" + crc32c + "/" + size;
    }
    return null;
  }
}
