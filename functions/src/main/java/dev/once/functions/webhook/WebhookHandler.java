package dev.once.functions.webhook;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.HttpAnswer;
import dev.once.entry.Report;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.InvalidSignature;
import dev.once.gemini.JwksUnavailable;
import dev.once.gemini.WebhookSignatures;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.observe.EventLog;
import dev.once.observe.ForeignText;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One Gemini webhook delivery: the signature (static webhooks) or token (dynamic ones) is verified on the raw body
 * bytes before anything is parsed; a completion event is then answered from one read when its job was completed
 * before, and otherwise handed to BatchCompleted through the batch completions topic ({@link CompletionHandoff}).
 * The answer never waits for the completion itself (a batches.get, the responses, a commit per chunk, a publish per
 * document: minutes for a large job), since Google asks for a 2xx within seconds and may disable a webhook whose
 * deliveries keep failing. Answers: 200 queued, duplicate (or the label of the job's earlier end), rejected or
 * ignored; 401 bad or stale signature or token; 413 above 1 MiB; 405 not a POST; 503 only when its own dependencies
 * fail (Google's keys, Firestore, the hand-off's publish), so Gemini retries. A publish that failed may still have
 * landed: the retry hands the job off again, which is harmless (the completion is claimed in the ledger). A signed
 * delivery this code cannot read (not JSON, no type, no usable job name: a format Google changed) is logged as
 * {@code rejected} and answered 200 {@code ignored} — a 400 would be retried for 24 hours and count toward disabling
 * the webhook, and resending the same bytes cannot help — and the reconciler is the safety net. Refusals before
 * authentication are logged as {@code unauthenticated}: internet noise must not page anyone.
 */
public final class WebhookHandler {
  static final int MAX_BODY_BYTES = 1024 * 1024;
  /**
   * The events that end a job. {@code batch.completed} is what Google's own cookbook worker handles for success, beside
   * the API reference's {@code batch.succeeded}; {@code batch.cancelled} is in the newer webhook API. The completion
   * reads the job's state from Gemini, so the name only decides whether to look.
   */
  static final Set<String> COMPLETION_TYPES =
      Set.of("batch.succeeded", "batch.completed", "batch.failed", "batch.expired", "batch.cancelled");
  /** The answer to a job handed off to BatchCompleted. */
  static final String QUEUED = "queued";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String function;
  private final WebhookSignatures signatures;
  private final CompletedJobs completed;
  private final CompletionHandoff handoff;
  private final Log log;

  public WebhookHandler(String function, WebhookSignatures signatures, CompletedJobs completed,
      CompletionHandoff handoff,
      Log log) {
    this.function = function;
    this.signatures = signatures;
    this.completed = completed;
    this.handoff = handoff;
    this.log = log;
  }

  public void service(HttpRequest request, HttpResponse response) throws IOException {
    long started = System.nanoTime();
    if (HttpAnswer.refusedUnlessPost(request, response)) {
      return;
    }
    byte[] body = HttpAnswer.readAtMost(request, MAX_BODY_BYTES);
    if (body == null) {
      log(OutcomeLabel.UNAUTHENTICATED, null, started, Map.of("reason", "body over " + MAX_BODY_BYTES + " bytes"));
      HttpAnswer.send(response, 413, "too_large");
      return;
    }
    boolean bound;
    try {
      bound = signatures.verify(request::getFirstHeader, body);
    } catch (InvalidSignature e) {
      log(OutcomeLabel.UNAUTHENTICATED, null, started, Map.of("reason", "signature: " + e.getMessage()));
      HttpAnswer.send(response, 401, "invalid_signature");
      return;
    } catch (JwksUnavailable e) {
      log(OutcomeLabel.FAILED, null, started, Map.of("error", e.getMessage()));
      HttpAnswer.send(response, 503, "unavailable");
      return;
    }
    Map<String, Object> event;
    try {
      event = JSON.readValue(body, new TypeReference<Map<String, Object>>() {});
    } catch (IOException | RuntimeException e) {
      event = null;
    }
    if (event == null) {
      unreadable(response, started, "the body is not a JSON object", null);
      return;
    }
    if (!(event.get("type") instanceof String type)) {
      unreadable(response, started, "the event has no type", null);
      return;
    }
    if (!COMPLETION_TYPES.contains(type)) {
      log.info("webhook event ignored", Map.of("function", function, "type", truncate(type)));
      HttpAnswer.send(response, 200, "ignored");
      return;
    }
    IdempotencyKey jobKey;
    try {
      jobKey = GeminiCompletionKeys.of(event);
    } catch (InvalidKey e) {
      unreadable(response, started, "the event names no usable batch job", e.getMessage());
      return;
    }
    acknowledge(jobKey, bound, response, started);
  }

  /**
   * A job completed before is answered from its record; any other is handed off, and answered once that is done. A
   * delivery bound to no endpoint ({@code v1a}: Google may have signed it for another) is handed off only for a job
   * this pipeline submitted, else ignored.
   */
  private void acknowledge(IdempotencyKey jobKey, boolean bound, HttpResponse response, long started)
      throws IOException {
    Optional<Report> earlier;
    String messageId;
    try {
      earlier = completed.earlier(jobKey);
      if (earlier.isEmpty() && !bound && !completed.submittedHere(jobKey)) {
        unreadable(response, started, "a delivery whose signature names no endpoint (v1a), for a job no document of"
            + " this pipeline waits for", jobKey.value());
        return;
      }
      messageId = earlier.isPresent() ? null : handoff.handOff(jobKey);
    } catch (RuntimeException e) {
      log(OutcomeLabel.FAILED, jobKey.value(), started, Map.of("error", String.valueOf(e)));
      HttpAnswer.send(response, 503, "unavailable", Map.of("key", jobKey.value()));
      return;
    }
    if (earlier.isPresent()) {
      earlier.get().log(log, function, started);
      HttpAnswer.send(response, 200, earlier.get().outcome().label(), Map.of("key", jobKey.value()));
      return;
    }
    log(OutcomeLabel.PROCESSED, jobKey.value(), started, Map.of("queued", messageId));
    HttpAnswer.send(response, 200, QUEUED, Map.of("key", jobKey.value()));
  }

  /**
   * A signed delivery this code cannot read: logged (with {@code detail}, which may quote the body, in the log only),
   * and acknowledged so that Gemini neither retries it nor counts it toward disabling the webhook.
   */
  private void unreadable(HttpResponse response, long started, String reason, String detail) throws IOException {
    log(OutcomeLabel.REJECTED, null, started, Map.of("reason", detail == null ? reason : reason + ": " + detail));
    HttpAnswer.send(response, 200, "ignored", Map.of("reason", reason));
  }

  private void log(OutcomeLabel outcome, String key, long started, Map<String, ?> details) {
    EventLog.record(log, function, key, Effects.COMPLETE, outcome, 0, EventLog.elapsedMs(started), details);
  }

  private static String truncate(String text) {
    return ForeignText.cut(text, 100);
  }
}
