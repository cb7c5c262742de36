package dev.once.local.storage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.wire.http.HttpError;
import java.util.LinkedHashMap;
import java.util.Map;

/** The writable fields of an object resource, as an upload's JSON metadata carries them. */
record ObjectMetadata(
    String name,
    String contentType,
    Map<String, String> metadata,
    String contentEncoding,
    String cacheControl,
    String contentDisposition,
    String md5Hash,
    String crc32c) {

  static final ObjectMetadata EMPTY = new ObjectMetadata(null, null, Map.of(), null, null, null, null, null);

  static ObjectMetadata from(JsonNode json) {
    if (json == null || json.isNull()) {
      return EMPTY;
    }
    if (!json.isObject()) {
      throw HttpError.badRequest("invalid", "The object metadata must be a JSON object.");
    }
    Map<String, String> custom = new LinkedHashMap<>();
    JsonNode metadata = json.get("metadata");
    if (metadata != null && !metadata.isNull()) {
      if (!metadata.isObject()) {
        throw HttpError.badRequest("invalid", "Invalid value for metadata: must be a map of strings.");
      }
      metadata.properties().forEach(e -> {
        if (!e.getValue().isTextual()) {
          throw HttpError.badRequest("invalid", "Invalid value for metadata." + e.getKey() + ": must be a string.");
        }
        custom.put(e.getKey(), e.getValue().asText());
      });
    }
    return new ObjectMetadata(text(json, "name"), text(json, "contentType"), custom, text(json, "contentEncoding"),
        text(json, "cacheControl"), text(json, "contentDisposition"), text(json, "md5Hash"), text(json, "crc32c"));
  }

  private static String text(JsonNode json, String field) {
    JsonNode value = json.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw HttpError.badRequest("invalid", "Invalid value for " + field + ": must be a string.");
    }
    return value.asText();
  }

  /** Query {@code name} wins only when the metadata has none, as the JSON API resolves it. */
  NewObject toNewObject(String queryName, String fallbackContentType, byte[] data) {
    String effectiveName = name != null ? name : queryName;
    String effectiveType = contentType != null ? contentType : fallbackContentType;
    return new NewObject(effectiveName, effectiveType, metadata, contentEncoding, cacheControl, contentDisposition,
        md5Hash, crc32c, data);
  }
}
