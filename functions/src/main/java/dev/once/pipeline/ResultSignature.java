package dev.once.pipeline;

import dev.once.gemini.SigningKeys;
import dev.once.key.PubSubMessageKeys;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Proof that a message on the results topic was published by this pipeline: the attribute {@value #ATTRIBUTE} holds
 * {@code v1,<base64 HMAC-SHA256>} of the message's {@code idempotency_key} and data with each of RESULTS_SIGNING_KEY's
 * keys (blank-separated during a rotation). Only the functions that publish results and MessageDelivered hold the
 * key, so a message anyone else publishes to the topic (the Cloud Storage agent, a mis-set notification, an attacker
 * with a publisher role) carries none that verifies: MessageDelivered refuses it before its key reaches the ledger,
 * so it can neither be notified nor, by claiming a real document's key first, suppress the real result.
 *
 * <p>The key is covered as well as the data: a real message's signature moved onto another key does not verify. What
 * is signed is {@code once-result.v1.<byte length of the key>.<key>.} followed by the data, which no two
 * (key, data) pairs share.
 */
public final class ResultSignature {
  public static final String ATTRIBUTE = "once_signature";

  private final SigningKeys keys;

  public ResultSignature(SigningKeys keys) {
    this.keys = keys;
  }

  /** From RESULTS_SIGNING_KEY's value. */
  public static ResultSignature fromKeys(String text) {
    return new ResultSignature(SigningKeys.parse(PipelineSetting.RESULTS_SIGNING_KEY, text));
  }

  /** The attribute's value for a result of {@code idempotencyKey} whose data is {@code data}. */
  public String sign(String idempotencyKey, byte[] data) {
    return keys.sign(prefix(idempotencyKey), data);
  }

  /** Whether {@code attributes} carry a signature of their {@code idempotency_key} and {@code data} by one key. */
  public boolean verifies(Map<String, String> attributes, byte[] data) {
    String key = attributes.get(PubSubMessageKeys.ATTRIBUTE);
    String signature = attributes.get(ATTRIBUTE);
    return key != null && signature != null && keys.verifies(signature, prefix(key), data);
  }

  private static byte[] prefix(String idempotencyKey) {
    byte[] key = idempotencyKey.getBytes(StandardCharsets.UTF_8);
    return ("once-result.v1." + key.length + "." + idempotencyKey + ".").getBytes(StandardCharsets.UTF_8);
  }
}
