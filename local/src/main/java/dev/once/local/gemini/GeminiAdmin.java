package dev.once.local.gemini;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.HttpError;
import dev.once.local.http.Json;
import dev.once.local.http.Request;
import dev.once.local.http.Responses;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * {@code /_admin/...}: the clock, outcomes, webhook modes, faults and counters, for a demo or test driving the
 * stand-in from another process. Admin calls need no API key and are not counted.
 */
final class GeminiAdmin {
  private final GeminiStandIn standIn;

  GeminiAdmin(GeminiStandIn standIn) {
    this.standIn = standIn;
  }

  void serve(Request request, List<String> path) {
    String route = request.method() + " " + String.join("/", path);
    try {
      switch (route) {
        case "GET counters" -> Responses.json(request.exchange(), 200, standIn.counters().toJson());
        case "POST counters/reset" -> {
          standIn.counters().reset();
          ok(request);
        }
        case "POST advance" -> ended(request, standIn.advance());
        case "POST complete-all" -> ended(request, standIn.completeAll());
        case "POST complete" -> {
          String state = request.query("state").orElse(null);
          standIn.finish(param(request, "name"), state == null ? null : BatchState.parse(state));
          ok(request);
        }
        case "POST outcome" -> {
          BatchState state = BatchState.parse(param(request, "state"));
          request.query("name").ifPresentOrElse(name -> standIn.planOutcome(name, state),
              () -> standIn.defaultOutcome(state));
          ok(request);
        }
        case "POST webhook-mode" -> {
          WebhookMode mode = WebhookMode.parse(param(request, "mode"));
          request.query("name").ifPresentOrElse(name -> standIn.webhookMode(name, mode),
              () -> standIn.webhookMode(mode));
          ok(request);
        }
        case "POST dynamic-signature" -> {
          standIn.dynamicSignature(DynamicSignature.parse(param(request, "scheme")));
          ok(request);
        }
        case "POST webhooks" -> {
          standIn.registerWebhook(URI.create(param(request, "url")));
          ok(request);
        }
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
        case "POST fail" -> {
          standIn.failNext((int) longParam(request, "count"), request.longQuery("status").orElse(503L).intValue());
          ok(request);
        }
        case "POST ambiguous" -> {
          standIn.ambiguousNext(param(request, "operation"), (int) longParam(request, "count"),
              AmbiguousFailure.parse(param(request, "failure")));
          ok(request);
        }
        case "POST latency" -> {
          standIn.latency(Duration.ofMillis(longParam(request, "ms")));
          ok(request);
        }
        default -> throw HttpError.notFound("No admin route " + route);
      }
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("invalid", e.getMessage());
    }
  }

  private static void ended(Request request, List<String> names) {
    ObjectNode body = Json.object();
    ArrayNode ended = body.putArray("ended");
    names.forEach(ended::add);
    Responses.json(request.exchange(), 200, body);
  }

  private static void ok(Request request) {
    Responses.json(request.exchange(), 200, Json.object().put("ok", true));
  }

  private static String param(Request request, String name) {
    return request.query(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }

  private static long longParam(Request request, String name) {
    return request.longQuery(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }
}
