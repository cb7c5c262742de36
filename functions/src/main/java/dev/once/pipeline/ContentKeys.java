package dev.once.pipeline;

import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;

/**
 * The key of a document's content: {@code content:<bucket>:<type>:sha256:<hex of the bytes>}. The same bytes uploaded
 * again under another name, or as another generation of the same name, have the same content key, so they are
 * analysed (and paid for) once. The bucket is in the key, so two inboxes (two tenants) never learn of each other's
 * documents; the type too, since the same bytes declared as another type are another request to Gemini. The bytes
 * themselves are hashed, not the event's md5Hash or crc32c: a composite object has no MD5, and a CRC32C is 32 bits.
 */
public final class ContentKeys {
  private ContentKeys() {}

  public static IdempotencyKey of(String bucket, String mimeType, byte[] content) {
    return IdempotencyKey.of("content:" + bucket + ":" + mimeType + ":sha256:" + Sha256.hex(content));
  }
}
