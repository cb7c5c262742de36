package dev.once.gemini;

import dev.once.config.InvalidSetting;
import dev.once.pipeline.PipelineSetting;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies a static Gemini webhook (one registered for the project): Standard Webhooks' symmetric signature.
 * {@code webhook-signature} holds one or more blank-separated {@code v1,<base64 HMAC-SHA256>} of {@code
 * "<webhook-id>.<webhook-timestamp>.<raw body>"}, keyed with the base64 part of a {@code whsec_} secret, the
 * timestamp within {@link WebhookMessage#TOLERANCE} of now. Several secrets are accepted at once so a secret can be
 * rolled. Comparison is constant-time.
 */
public final class WebhookVerifier {
  private static final String PREFIX = "whsec_";
  private static final int MAX_SIGNATURES = 16;

  private final List<byte[]> keys;
  private final InstantSource clock;

  public WebhookVerifier(List<byte[]> keys, InstantSource clock) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("at least one webhook secret is needed");
    }
    this.keys = List.copyOf(keys);
    this.clock = clock;
  }

  /** From {@code GEMINI_WEBHOOK_SECRET}'s value: blank-separated {@code whsec_} secrets. */
  public static WebhookVerifier fromSecrets(String secrets) {
    return new WebhookVerifier(parseSecrets(secrets), InstantSource.system());
  }

  /** Blank-separated {@code whsec_<base64>} secrets. The message never repeats a secret. */
  static List<byte[]> parseSecrets(String text) {
    List<byte[]> keys = new ArrayList<>();
    int position = 0;
    for (String secret : text.strip().split("\\s+")) {
      position++;
      if (!secret.startsWith(PREFIX)) {
        throw new InvalidSetting(PipelineSetting.GEMINI_WEBHOOK_SECRET, "secret #" + position + " does not start with " + PREFIX);
      }
      try {
        byte[] key = Base64.getDecoder().decode(secret.substring(PREFIX.length()));
        if (key.length < 16) {
          throw new IllegalArgumentException("short");
        }
        keys.add(key);
      } catch (IllegalArgumentException e) {
        throw new InvalidSetting(PipelineSetting.GEMINI_WEBHOOK_SECRET, "secret #" + position
            + " is not whsec_ followed by base64 of at least 16 bytes");
      }
    }
    return keys;
  }

  /** @param header a header by name, case-insensitive */
  public void verify(Function<String, Optional<String>> header, byte[] body) throws InvalidSignature {
    WebhookMessage message = WebhookMessage.read(header, clock.instant());
    String signatures =
        header.apply("webhook-signature").orElseThrow(() -> new InvalidSignature("no webhook-signature header"));
    byte[] signedPrefix = message.signedPrefix();
    List<byte[]> expected = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      expected.add(hmac(key, signedPrefix, body));
    }
    String[] offered = signatures.strip().split("\\s+");
    if (offered.length > MAX_SIGNATURES) {
      throw new InvalidSignature("too many signatures");
    }
    boolean matched = false;
    for (String signature : offered) {
      int comma = signature.indexOf(',');
      if (comma < 0 || !signature.substring(0, comma).equals("v1")) {
        continue; // another scheme version: not ours to check
      }
      byte[] candidate;
      try {
        candidate = Base64.getDecoder().decode(signature.substring(comma + 1));
      } catch (IllegalArgumentException e) {
        continue;
      }
      for (byte[] mac : expected) {
        // Every candidate is compared with every key, without stopping early, in constant time.
        matched |= MessageDigest.isEqual(mac, candidate);
      }
    }
    if (!matched) {
      throw new InvalidSignature("no v1 signature matches any configured secret");
    }
  }

  private static byte[] hmac(byte[] key, byte[] prefix, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(prefix);
      return mac.doFinal(body);
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }
}
