package dev.once.functions;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.config.MissingSetting;
import dev.once.pipeline.Effects;
import dev.once.gemini.InvalidSignature;
import dev.once.gemini.WebhookVerifier;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Set;

/**
 * Entry point for the Gemini API webhook (HTTP, public: it checks signatures itself). The signature is verified
 * on the raw body bytes before anything is parsed. Answers: 200 processed, duplicate, rejected or ignored; 202
 * in flight or pending; 401 bad or stale signature; 400 signed but malformed; 413 above 1 MiB; 405 not a POST;
 * 5xx only when its own dependencies fail, so Gemini retries. Gemini disables endpoints that fail often, so an
 * event another delivery holds is a 202, and the reconciler is the safety net.
 */
public final class GeminiWebhook implements HttpFunction {
  static final String NAME = "GeminiWebhook";
  static final int MAX_BODY_BYTES = 1024 * 1024;
  static final Set<String> COMPLETION_TYPES = Set.of("batch.succeeded", "batch.failed", "batch.expired", "batch.cancelled");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Lazy<WebhookVerifier> VERIFIER =
      Lazy.of(() -> WebhookVerifier.fromSettings(Clients.instance().settings));
  private static final Lazy<CompletionFlow> FLOW = Lazy.of(() -> wire(Clients.instance()));

  static CompletionFlow wire(Clients clients) {
    return new CompletionFlow(clients.once.get(), clients.batchJobs, clients.records, clients.resultPublication());
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    long started = System.nanoTime();
    if (!"POST".equals(request.getMethod())) {
      response.appendHeader("Allow", "POST");
      HttpAnswer.send(response, 405, "method_not_allowed");
      return;
    }
    byte[] body = readAtMost(request, MAX_BODY_BYTES);
    if (body == null) {
      log("rejected", null, started, Map.of("reason", "body over " + MAX_BODY_BYTES + " bytes"));
      HttpAnswer.send(response, 413, "too_large");
      return;
    }
    WebhookVerifier verifier;
    try {
      verifier = VERIFIER.get();
    } catch (MissingSetting e) {
      Log.error("the webhook cannot verify signatures: " + e.getMessage(), Map.of("function", NAME));
      HttpAnswer.send(response, 500, "misconfigured");
      return;
    }
    try {
      verifier.verify(request::getFirstHeader, body);
    } catch (InvalidSignature e) {
      log("rejected", null, started, Map.of("reason", "signature: " + e.getMessage()));
      HttpAnswer.send(response, 401, "invalid_signature");
      return;
    }
    Map<String, Object> event;
    try {
      event = JSON.readValue(body, new TypeReference<Map<String, Object>>() {});
    } catch (IOException | RuntimeException e) {
      log("rejected", null, started, Map.of("reason", "body is not a JSON object"));
      HttpAnswer.send(response, 400, "malformed", Map.of("reason", "the body is not a JSON object"));
      return;
    }
    if (event == null || !(event.get("type") instanceof String type)) {
      log("rejected", null, started, Map.of("reason", "no event type"));
      HttpAnswer.send(response, 400, "malformed", Map.of("reason", "the event has no type"));
      return;
    }
    if (!COMPLETION_TYPES.contains(type)) {
      Log.info("webhook event ignored", Map.of("function", NAME, "type", truncate(type)));
      HttpAnswer.send(response, 200, "ignored");
      return;
    }
    IdempotencyKey jobKey;
    try {
      jobKey = GeminiCompletionKeys.of(event);
    } catch (InvalidKey e) {
      log("rejected", null, started, Map.of("reason", e.getMessage()));
      HttpAnswer.send(response, 400, "malformed", Map.of("reason", "the event names no batch job"));
      return;
    }
    complete(jobKey, response, started);
  }

  private static void complete(IdempotencyKey jobKey, HttpResponse response, long started) throws IOException {
    EventReport report;
    try {
      report = FLOW.get().complete(jobKey);
    } catch (CompletionFlow.NotFinished e) {
      log("in_flight", jobKey.value(), started, Map.of("reason", e.getMessage()));
      HttpAnswer.send(response, 202, "pending", Map.of("key", jobKey.value()));
      return;
    } catch (RuntimeException e) {
      log(EventLog.FAILED, jobKey.value(), started, Map.of("error", String.valueOf(e)));
      HttpAnswer.send(response, 503, "unavailable", Map.of("key", jobKey.value()));
      return;
    }
    EventLog.record(NAME, report.key(), report.effect(), report.outcome(), report.attempts(),
        EventLog.elapsedMs(started), Map.of("effects", report.effects()));
    int code = report.inFlight() ? 202 : 200;
    HttpAnswer.send(response, code, report.outcome(), Map.of("key", jobKey.value()));
  }

  /** The body, or null when it is longer than {@code limit}; a declared length over the limit is not read. */
  static byte[] readAtMost(HttpRequest request, int limit) throws IOException {
    if (request.getContentLength() > limit) {
      return null;
    }
    try (InputStream in = request.getInputStream()) {
      byte[] body = in.readNBytes(limit + 1);
      return body.length > limit ? null : body;
    }
  }

  private static void log(String outcome, String key, long started, Map<String, ?> details) {
    EventLog.record(NAME, key, Effects.COMPLETE, outcome, 0, EventLog.elapsedMs(started), details);
  }

  private static String truncate(String text) {
    return text.length() <= 100 ? text : text.substring(0, 100) + "…";
  }
}
