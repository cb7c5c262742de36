package dev.once.key;

import java.util.Map;

/**
 * Key of a Pub/Sub message. A producer that knows the business event passes its key in the
 * {@value #ATTRIBUTE} attribute (every message this pipeline publishes does); otherwise the message id, which
 * Pub/Sub keeps across redeliveries, absorbs redeliveries of that one message.
 */
public final class PubSubMessageKeys {
  public static final String ATTRIBUTE = "idempotency_key";

  private PubSubMessageKeys() {}

  public static IdempotencyKey of(Map<String, String> attributes, String messageId) {
    String supplied = attributes == null ? null : attributes.get(ATTRIBUTE);
    if (supplied != null && !supplied.isBlank()) {
      return IdempotencyKey.of(supplied.strip());
    }
    if (messageId == null || messageId.isBlank()) {
      throw new InvalidKey("Pub/Sub message has neither an " + ATTRIBUTE + " attribute nor a message id");
    }
    return IdempotencyKey.of("pubsub:" + messageId.strip());
  }
}
