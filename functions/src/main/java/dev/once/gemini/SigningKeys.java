package dev.once.gemini;

import dev.once.config.InvalidSetting;
import dev.once.config.Setting;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One or more HMAC-SHA256 keys, written as Standard Webhooks writes them: blank-separated {@code whsec_<base64>}
 * secrets, each of at least 16 bytes. Several at once so a key can be rolled: a signer signs with each (the
 * signatures blank-separated, {@code v1,<base64>} each, as Standard Webhooks' {@code webhook-signature}), a verifier
 * accepts any. Comparison is constant-time.
 */
public final class SigningKeys {
  private static final String PREFIX = "whsec_";
  private static final String VERSION = "v1";
  /** More signatures than this in one value is not a rotation: refused before any HMAC is computed. */
  public static final int MAX_SIGNATURES = 16;

  private final List<byte[]> keys;

  private SigningKeys(List<byte[]> keys) {
    this.keys = List.copyOf(keys);
  }

  /** The keys in {@code text}; an {@link InvalidSetting} naming {@code setting} (never the secret) otherwise. */
  public static SigningKeys parse(Setting setting, String text) {
    List<byte[]> keys = new ArrayList<>();
    int position = 0;
    for (String secret : text.strip().split("\\s+")) {
      position++;
      if (!secret.startsWith(PREFIX)) {
        throw new InvalidSetting(setting, "secret #" + position + " does not start with " + PREFIX);
      }
      try {
        byte[] key = Base64.getDecoder().decode(secret.substring(PREFIX.length()));
        if (key.length < 16) {
          throw new IllegalArgumentException("short");
        }
        keys.add(key);
      } catch (IllegalArgumentException e) {
        throw new InvalidSetting(setting, "secret #" + position
            + " is not whsec_ followed by base64 of at least 16 bytes");
      }
    }
    return new SigningKeys(keys);
  }

  public static SigningKeys of(List<byte[]> keys) {
    return new SigningKeys(keys);
  }

  public List<byte[]> keys() {
    return keys;
  }

  /** {@code v1,<base64 HMAC>} with each key, blank-separated: what a receiver checks any one of. */
  public String sign(byte[]... parts) {
    StringBuilder signatures = new StringBuilder();
    for (byte[] key : keys) {
      signatures.append(signatures.isEmpty() ? "" : " ").append(VERSION).append(',')
          .append(Base64.getEncoder().encodeToString(hmac(key, parts)));
    }
    return signatures.toString();
  }

  /**
   * Whether one of the {@code v1} signatures in {@code offered} is the HMAC of {@code parts} with one of the keys.
   * Other versions are skipped; every candidate is compared with every key, without stopping early.
   */
  public boolean verifies(String offered, byte[]... parts) {
    String[] signatures = offered == null ? new String[0] : offered.strip().split("\\s+");
    if (signatures.length > MAX_SIGNATURES) {
      return false;
    }
    List<byte[]> expected = keys.stream().map(key -> hmac(key, parts)).toList();
    boolean matched = false;
    for (String signature : signatures) {
      int comma = signature.indexOf(',');
      if (comma < 0 || !signature.substring(0, comma).equals(VERSION)) {
        continue;
      }
      byte[] candidate;
      try {
        candidate = Base64.getDecoder().decode(signature.substring(comma + 1));
      } catch (IllegalArgumentException e) {
        continue;
      }
      for (byte[] mac : expected) {
        matched |= MessageDigest.isEqual(mac, candidate);
      }
    }
    return matched;
  }

  public static byte[] hmac(byte[] key, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      for (byte[] part : parts) {
        mac.update(part);
      }
      return mac.doFinal();
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }
}
