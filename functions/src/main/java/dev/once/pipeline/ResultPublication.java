package dev.once.pipeline;

import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Held;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.observe.Trace;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * Publishes results as a guarded effect. Each message carries the document's key as its {@code idempotency_key},
 * so the copy a crash between publishing and recording may cause is recognised downstream, and the trace it was
 * published under, so the notification's log lines join the document's, and its {@link ResultSignature}, so
 * MessageDelivered can tell it from a message anyone else put on the topic. The lease must outlast the publish before
 * it starts.
 */
public final class ResultPublication {
  /** A batch job's results published side by side, at most this many at once. */
  static final int PUBLISHING_AT_ONCE = 8;
  private final Once once;
  private final Supplier<MessagePublisher> publisher;
  private final Supplier<String> topic;
  private final ResultSignature signature;

  public ResultPublication(Once once, Supplier<MessagePublisher> publisher, Supplier<String> topic,
      ResultSignature signature) {
    this.once = once;
    this.publisher = publisher;
    this.topic = topic;
    this.signature = signature;
  }

  /** One document's result, guarded by the document's key; on {@code held} when an earlier commit claimed it. */
  public Outcome publish(IdempotencyKey documentKey, ResultMessage summary, Optional<Held> held) {
    Once.Effect effect = attempt -> Completion.of(Map.of("messageId", send(attempt, documentKey, summary)));
    return held.map(claim -> once.runHeld(claim, effect))
        .orElseGet(() -> once.run(documentKey, Effects.PUBLISH, effect));
  }

  public Outcome publish(IdempotencyKey documentKey, ResultMessage summary) {
    return publish(documentKey, summary, Optional.empty());
  }

  /**
   * The results of a batch job (or of a chunk of one), guarded by the job's key; each message carries its own
   * document's key. Published in waves of {@link #PUBLISHING_AT_ONCE} side by side, each bounded by
   * {@link MessagePublisher#TIMEOUT} and the lease ensured for it: a chunk of 100 takes a dozen publishes' time, not a
   * hundred, and the deliveries they trigger (a notification each) come in waves of that size, not all at once. A
   * failure fails the effect, and its retry publishes them all again (the copies carry their keys, which the delivery
   * recognises).
   */
  public Outcome publishAll(IdempotencyKey jobKey, List<ResultMessage> summaries, Optional<Held> held) {
    Once.Effect effect = attempt -> {
      Optional<Trace> trace = Trace.current();
      try (ExecutorService sending = Executors.newFixedThreadPool(PUBLISHING_AT_ONCE)) {
        for (int first = 0; first < summaries.size(); first += PUBLISHING_AT_ONCE) {
          attempt.ensureLease(MessagePublisher.TIMEOUT);
          List<Future<String>> wave = summaries.subList(first, Math.min(summaries.size(), first + PUBLISHING_AT_ONCE))
              .stream().map(summary -> sending.submit(
                  () -> send(summary.key(), summary, trace)))
              .toList();
          for (Future<String> message : wave) {
            awaitSent(message);
          }
        }
      }
      return Completion.of(Map.of("messages", (long) summaries.size()));
    };
    return held.map(claim -> once.runHeld(claim, effect)).orElseGet(() -> once.run(jobKey, Effects.PUBLISH, effect));
  }

  /**
   * One result, under the publication's downstream key: the document's key, or after an operator invalidated the
   * publication on purpose (re-run N) {@code KEY/rerun-N} with {@code rerun} in the message, so the results topic and
   * the notified endpoint see a new event.
   */
  private String send(Attempt attempt, IdempotencyKey documentKey, ResultMessage summary) {
    attempt.ensureLease(MessagePublisher.TIMEOUT);
    // The run is the publication's, or the analysis's when that was run again on purpose and this publication was not
    // (a run in another mode than the first: a batch job's completion, a sync analysis, publish under its own record).
    int run = Math.max(attempt.generation(), summary.run());
    if (run == 1) {
      return send(documentKey, summary, Trace.current());
    }
    return send(documentKey.rerun(run), summary.asRun(run), Trace.current());
  }

  /** One message; the trace passed along, since a sending thread does not carry the event's. */
  private String send(IdempotencyKey documentKey, ResultMessage summary, Optional<Trace> trace) {
    Map<String, String> attributes = new HashMap<>(ResultMessage.attributes(documentKey));
    trace.ifPresent(t -> attributes.put(Trace.TRACEPARENT, t.traceparent()));
    byte[] data = summary.json();
    attributes.put(ResultSignature.ATTRIBUTE, signature.sign(documentKey.value(), data));
    return publisher.get().publish(topic.get(), data, attributes);
  }

  /** Waits for one message sent beside others; its failure, as a publish's own (the sending already bounded it). */
  private static void awaitSent(Future<String> message) {
    try {
      message.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing a batch job's results", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException failure ? failure
          : new IllegalStateException("could not publish a batch job's result", e.getCause());
    }
  }
}
