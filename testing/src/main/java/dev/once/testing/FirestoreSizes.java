package dev.once.testing;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;

/**
 * A document's size as Firestore counts it against its 1 MiB limit (cloud.google.com/firestore/docs/storage-size): its
 * name (each path segment's UTF-8 bytes + 1, + 16), each field's name (UTF-8 bytes + 1) and value, + 32. A string is
 * its UTF-8 bytes + 1; a number or a timestamp 8; a boolean or null 1; an array the sum of its values; a map the sum
 * of its fields. So a test on the in-memory store meets the limit a real commit would.
 */
public final class FirestoreSizes {
  /** Firestore's limit for a document: "Maximum size for a document: 1 MiB (1,048,576 bytes)". */
  public static final long MAX_DOCUMENT_BYTES = 1_048_576;

  private FirestoreSizes() {}

  public static long of(String collection, String id, Map<String, ?> fields) {
    return text(collection) + text(id) + 16 + fields(fields) + 32;
  }

  private static long fields(Map<?, ?> fields) {
    long size = 0;
    for (Map.Entry<?, ?> field : fields.entrySet()) {
      size += text(String.valueOf(field.getKey())) + value(field.getValue());
    }
    return size;
  }

  private static long value(Object value) {
    if (value == null || value instanceof Boolean) {
      return 1;
    }
    if (value instanceof CharSequence text) {
      return text(text.toString());
    }
    if (value instanceof Map<?, ?> map) {
      return fields(map);
    }
    if (value instanceof Collection<?> values) {
      long size = 0;
      for (Object element : values) {
        size += value(element);
      }
      return size;
    }
    if (value instanceof byte[] bytes) {
      return bytes.length;
    }
    return 8; // numbers, timestamps, server-time and increment markers
  }

  private static long text(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length + 1;
  }
}
