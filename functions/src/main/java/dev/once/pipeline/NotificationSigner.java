package dev.once.pipeline;

import dev.once.gemini.SigningKeys;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Signs each notification as Standard Webhooks (standardwebhooks.com) does, so the receiver can tell a result of this
 * pipeline from anyone's POST with any Standard Webhooks library: {@code webhook-id} (the same for every try of one
 * result: {@code msg_} and the SHA-256 of its idempotency key), {@code webhook-timestamp} (seconds, at each try, which
 * receivers hold within 5 minutes of their clock) and {@code webhook-signature}: {@code v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">} with each of NOTIFY_SIGNING_SECRET's {@code whsec_} secrets, blank-separated (rotation: sign
 * with the old and the new while receivers move over).
 */
public final class NotificationSigner implements IdempotentPost.Headers {
  public static final String ID = "webhook-id";
  public static final String TIMESTAMP = "webhook-timestamp";
  public static final String SIGNATURE = "webhook-signature";

  private final SigningKeys keys;
  private final InstantSource clock;

  public NotificationSigner(SigningKeys keys, InstantSource clock) {
    this.keys = keys;
    this.clock = clock;
  }

  /** From NOTIFY_SIGNING_SECRET's value. */
  public static NotificationSigner fromSecrets(String secrets) {
    return new NotificationSigner(SigningKeys.parse(PipelineSetting.NOTIFY_SIGNING_SECRET, secrets),
        InstantSource.system());
  }

  /** {@link #headers}, for the notification's POST ({@link IdempotentPost#withHeaders}). */
  @Override
  public Map<String, String> of(IdempotencyKey key, byte[] body) {
    return headers(key.value(), body);
  }

  /** The three headers of one try of the notification of {@code idempotencyKey} carrying {@code body}. */
  public Map<String, String> headers(String idempotencyKey, byte[] body) {
    String id = "msg_" + Sha256.hex(idempotencyKey);
    String timestamp = String.valueOf(clock.instant().getEpochSecond());
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(ID, id);
    headers.put(TIMESTAMP, timestamp);
    headers.put(SIGNATURE, keys.sign((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8), body));
    return headers;
  }
}
