package dev.once.wire.storage;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.zip.CRC32C;

/**
 * The two checksums GCS reports, encoded as GCS encodes them: base64 of the big-endian bytes. Public for the Cloud
 * Storage stand-in (once-local), which checks an upload's against them.
 */
public final class Hashes {
  private Hashes() {}

  public static String md5(byte[] data) {
    try {
      return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has MD5", e);
    }
  }

  public static String crc32c(byte[] data) {
    CRC32C crc = new CRC32C();
    crc.update(data);
    return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
  }
}
