package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.AdminRoutes;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.Request;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import java.net.URI;
import java.time.Instant;
import java.util.List;

/**
 * The Gemini stand-in's own {@code /_admin/...} routes: the batch clock and Google's time, outcomes, models' stages,
 * how the model thinks and takes sampling parameters, webhook modes and ambiguous failures, for a demo or test driving it from another process (counters and faults: {@link AdminRoutes}).
 * Admin calls need no API key.
 */
final class GeminiAdmin implements AdminRoutes.Own {
  private final GeminiStandIn standIn;

  GeminiAdmin(GeminiStandIn standIn) {
    this.standIn = standIn;
  }

  @Override
  public boolean serve(Request request, String route) {
    switch (route) {
      case "POST advance" -> ended(request, standIn.advance());
      case "POST complete-all" -> ended(request, standIn.completeAll());
      case "POST complete" -> {
        String state = request.query("state").orElse(null);
        standIn.finish(request.required("name"), state == null ? null : BatchState.parse(state));
      }
      case "POST outcome" -> {
        BatchState state = BatchState.parse(request.required("state"));
        request.query("name").ifPresentOrElse(name -> standIn.planOutcome(name, state),
            () -> standIn.defaultOutcome(state));
      }
      case "POST webhook-mode" -> {
        WebhookMode mode = WebhookMode.parse(request.required("mode"));
        request.query("name").ifPresentOrElse(name -> standIn.webhookMode(name, mode),
            () -> standIn.webhookMode(mode));
      }
      case "POST answer-faults" -> {
        AnswerFault[] faults = AnswerFault.parse(request.query("faults").orElse("")).toArray(AnswerFault[]::new);
        request.query("name").ifPresentOrElse(name -> standIn.answerFaults(name, faults),
            () -> standIn.defaultAnswerFaults(faults));
      }
      case "POST model" -> standIn.model(request.required("name"), request.required("stage"),
          request.query("to").orElse(null));
      case "POST sampling" -> standIn.strictSampling(Boolean.parseBoolean(request.required("strict")));
      case "POST thinking" -> standIn.thinkingTokens((int) request.requiredLong("tokens"));
      case "POST clock" -> {
        String now = request.required("now");
        standIn.clock(now.equals("system") ? null : Instant.parse(now));
      }
      case "POST dynamic-signature" -> standIn.dynamicSignature(DynamicSignature.parse(request.required("scheme")));
      case "POST webhooks" -> standIn.registerWebhook(URI.create(request.required("url")));
      case "GET webhooks" -> {
        ArrayNode all = Json.array();
        for (WebhookDelivery d : standIn.webhookDeliveries()) {
          ObjectNode n = all.addObject();
          n.put("webhookId", d.webhookId());
          n.put("eventType", d.eventType());
          n.put("batch", d.batchName());
          n.put("target", d.target().toString());
          n.put("dynamic", d.dynamic());
          n.put("attempt", d.attempt());
          n.put("status", d.status());
          n.put("at", d.at().toString());
        }
        Responses.json(request.exchange(), 200, all);
      }
      case "GET batches" -> {
        ObjectNode all = Json.object();
        standIn.batchNames().forEach(name -> all.put(name, standIn.state(name).name()));
        Responses.json(request.exchange(), 200, all);
      }
      case "POST ambiguous" -> standIn.ambiguousNext(request.required("operation"),
          (int) request.requiredLong("count"), AmbiguousFailure.parse(request.required("failure")));
      default -> {
        return false;
      }
    }
    return true;
  }

  private static void ended(Request request, List<String> names) {
    ObjectNode body = Json.object();
    ArrayNode ended = body.putArray("ended");
    names.forEach(ended::add);
    Responses.json(request.exchange(), 200, body);
  }
}
