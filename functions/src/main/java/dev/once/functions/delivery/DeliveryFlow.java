package dev.once.functions.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.entry.PubSubMessage;
import dev.once.entry.Report;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Refusal;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.key.Sha256;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A result delivered from the results topic: notify the endpoint once ({@link IdempotentPost}, keyed by the result's
 * key). The endpoint's 2xx completes it; a 4xx other than 408, 409, 425 and 429 refuses it for good (rejected, and
 * the message goes to the dead-letter topic, once); 429, 503 and a refused connection (nothing done), and 5xx, 408,
 * 409, 425 (the receiver still working on the key), timeouts and broken connections (it may have been done) release
 * the claim and throw, so Eventarc redelivers and the next try goes at once, with the same key.
 */
public final class DeliveryFlow {
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
  static final String REASON_ATTRIBUTE = "once_error";

  private final Once once;
  private final Supplier<IdempotentPost> notifier;
  private final Supplier<MessagePublisher> publisher;
  private final Supplier<String> deadLetterTopic;

  public DeliveryFlow(Once once, Supplier<IdempotentPost> notifier, Supplier<MessagePublisher> publisher,
      Supplier<String> deadLetterTopic) {
    this.once = once;
    this.notifier = notifier;
    this.publisher = publisher;
    this.deadLetterTopic = deadLetterTopic;
  }

  /** The producer's {@code idempotency_key} attribute, else {@code pubsub:messageId}. */
  public static IdempotencyKey key(PubSubMessage message) {
    return PubSubMessageKeys.of(message.attributes(), message.messageId());
  }

  public Report deliver(PubSubMessage message, IdempotencyKey key) {
    String fingerprint = fingerprint(message.data());
    // No look first: the claim is a create, which a duplicate fails and then reads, so a first delivery reads nothing.
    Outcome notified = once.run(key, Effects.NOTIFY, fingerprint, attempt -> {
      // The POST covers its timeout by the lease first: a holder whose lease may run out during it does not send it.
      // Its key, header and body alike: the message's, or KEY/rerun-N when an operator invalidated it on purpose.
      IdempotentPost.Response answer =
          notifier.get().post(attempt, "application/json", body(attempt.downstreamKey(), message));
      if (!answer.ok()) {
        throw Refusal.permanent("the notify endpoint refused with " + answer.status() + ": " + answer.body());
      }
      return Completion.of(Map.of("status", (long) answer.status()));
    });
    Report report = Report.of(key, Effects.NOTIFY, notified);
    if (notified instanceof Outcome.Rejected rejected) {
      return report.then(Effects.DEAD_LETTER, once.run(key, Effects.DEAD_LETTER, attempt -> {
        Map<String, String> attributes = new HashMap<>(message.attributes());
        attributes.put(PubSubMessageKeys.ATTRIBUTE, key.value());
        attributes.put(REASON_ATTRIBUTE, truncate(rejected.reason()));
        return Completion.of(
            Map.of("messageId", publisher.get().publish(deadLetterTopic.get(), message.data(), attributes)));
      }));
    }
    return report;
  }

  /**
   * The JSON summary the endpoint gets: the result itself when the message is JSON, else its bytes in base64. It
   * depends on the key and the data only, not the message id: a copy of the result (a publish whose answer was lost
   * is sent again under the same key) must bring the same body, or a receiver following the IETF Idempotency-Key
   * draft answers 422 to the same key with another request, and a notification it holds would be dead-lettered.
   */
  static byte[] body(IdempotencyKey key, PubSubMessage message) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    body.put("idempotencyKey", key.value());
    Optional<JsonNode> parsed = parse(message.data());
    if (parsed.isPresent()) {
      body.set("result", parsed.get());
    } else {
      body.put("data", Base64.getEncoder().encodeToString(message.data()));
    }
    return JSON.writeValueAsBytes(body);
  }

  /** What identifies the payload: canonical JSON (key order does not matter), else the raw bytes. */
  static String fingerprint(byte[] data) {
    byte[] canonical = parse(data).map(node -> {
      try {
        return JSON.writeValueAsBytes(JSON.treeToValue(node, Object.class));
      } catch (IOException e) {
        return data;
      }
    }).orElse(data);
    return "sha256:" + Sha256.hex(canonical);
  }

  private static Optional<JsonNode> parse(byte[] data) {
    try {
      JsonNode node = JSON.readTree(data);
      return node != null && node.isContainerNode() ? Optional.of(node) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Pub/Sub attribute values hold at most 1,024 bytes: cut at a character boundary well below that. */
  static String truncate(String text) {
    String value = text == null ? "" : text;
    int limit = 900;
    if (value.getBytes(StandardCharsets.UTF_8).length <= limit) {
      return value;
    }
    StringBuilder cut = new StringBuilder();
    int bytes = 0;
    for (int i = 0; i < value.length();) {
      int codePoint = value.codePointAt(i);
      int size = new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8).length;
      if (bytes + size > limit) {
        break;
      }
      cut.appendCodePoint(codePoint);
      bytes += size;
      i += Character.charCount(codePoint);
    }
    return cut.append('…').toString();
  }
}
