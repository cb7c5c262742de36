package dev.once.functions.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.entry.PubSubMessage;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.observe.Trace;
import dev.once.pipeline.MessagePublisher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The webhook's hand-off of a finished batch job to BatchCompleted, through the batch completions topic: a message
 * naming the job ({@code {"job":"batches/ID"}}), its key as {@code idempotency_key}, and the delivery's trace. Not
 * guarded: a publish whose answer was lost may have landed, and Gemini's retry then hands the job off again, but two
 * messages for one job complete it once (the completion is claimed in the ledger), so a second copy costs one read.
 */
public final class CompletionHandoff {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String JOB_FIELD = "job";

  private final Supplier<MessagePublisher> publisher;
  private final Supplier<String> topic;

  public CompletionHandoff(Supplier<MessagePublisher> publisher, Supplier<String> topic) {
    this.publisher = publisher;
    this.topic = topic;
  }

  /** Publishes the job (bounded by {@link MessagePublisher#TIMEOUT}); its message id. Throws when it may not have. */
  String handOff(IdempotencyKey jobKey) {
    Map<String, String> attributes = new HashMap<>();
    attributes.put(PubSubMessageKeys.ATTRIBUTE, jobKey.value());
    Trace.current().ifPresent(trace -> attributes.put(Trace.TRACEPARENT, trace.traceparent()));
    return publisher.get().publish(topic.get(), data(jobKey), attributes);
  }

  static byte[] data(IdempotencyKey jobKey) {
    // A job name is [A-Za-z0-9_-] after its collection (GeminiCompletionKeys): nothing in it needs escaping.
    String json = "{\"" + JOB_FIELD + "\":\"" + GeminiCompletionKeys.jobName(jobKey) + "\"}";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The job a hand-off names. The data, not the attribute, is the truth: an operator re-publishing a dead letter by
   * hand keeps the data, and the key is folded from it as from every other spelling of a job's name. A message that
   * names none is refused for good ({@link InvalidKey}): redelivering the same bytes cannot help.
   */
  public static IdempotencyKey jobKey(PubSubMessage message) {
    JsonNode job;
    try {
      job = JSON.readTree(message.data()).path(JOB_FIELD);
    } catch (IOException | RuntimeException e) {
      throw new InvalidKey("message " + message.messageId() + " is not a hand-off of a batch job (not JSON)");
    }
    if (!job.isTextual()) {
      throw new InvalidKey("message " + message.messageId() + " names no batch job (no \"" + JOB_FIELD + "\")");
    }
    return GeminiCompletionKeys.ofName(job.asText());
  }
}
