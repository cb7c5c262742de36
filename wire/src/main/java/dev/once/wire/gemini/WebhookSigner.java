package dev.once.wire.gemini;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Standard Webhooks signatures, as the Gemini API signs its webhooks: {@code webhook-signature} is
 * {@code v1,<base64 HMAC-SHA256 of "id.timestamp.body">}, keyed with the base64-decoded part of a
 * {@code whsec_...} secret. Public so tests elsewhere can sign deliveries of their own.
 */
public final class WebhookSigner {
  private static final String PREFIX = "whsec_";

  private final String secret;
  private final byte[] key;

  private WebhookSigner(String secret, byte[] key) {
    this.secret = secret;
    this.key = key;
  }

  /** Rejects anything but {@code whsec_} followed by base64 (a typo should fail at startup, not in a test). */
  public static WebhookSigner fromSecret(String secret) {
    if (secret == null || !secret.startsWith(PREFIX)) {
      throw new IllegalArgumentException("a webhook secret looks like whsec_<base64>");
    }
    byte[] key;
    try {
      key = Base64.getDecoder().decode(secret.substring(PREFIX.length()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("the part after whsec_ must be base64", e);
    }
    if (key.length == 0) {
      throw new IllegalArgumentException("the webhook secret key is empty");
    }
    return new WebhookSigner(secret, key);
  }

  /** A fresh random {@code whsec_} secret (32 bytes of key). */
  public static String newSecret() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return PREFIX + Base64.getEncoder().encodeToString(key);
  }

  public String secret() {
    return secret;
  }

  /** The {@code webhook-signature} header value for one delivery. */
  public String sign(String webhookId, long timestampSeconds, byte[] body) {
    return "v1," + Base64.getEncoder().encodeToString(hmac(webhookId, Long.toString(timestampSeconds), body));
  }

  /** True when any {@code v1,} entry of the (space-separated) header matches; compared in constant time. */
  public boolean verify(String webhookId, String timestamp, byte[] body, String signatureHeader) {
    if (webhookId == null || timestamp == null || signatureHeader == null) {
      return false;
    }
    byte[] expected = hmac(webhookId, timestamp, body);
    for (String candidate : signatureHeader.trim().split(" +")) {
      if (candidate.startsWith("v1,")) {
        try {
          if (MessageDigest.isEqual(expected, Base64.getDecoder().decode(candidate.substring(3)))) {
            return true;
          }
        } catch (IllegalArgumentException notBase64) {
          // a malformed entry simply does not match
        }
      }
    }
    return false;
  }

  private byte[] hmac(String webhookId, String timestamp, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update((webhookId + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JDK has HmacSHA256", e);
    }
  }
}
