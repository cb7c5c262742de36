package dev.once.local.eventarc;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.local.http.ApiHandler;
import dev.once.local.http.Request;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import dev.once.wire.storage.ObjectFinalized;
import java.net.URI;
import java.util.Optional;

/**
 * The relay's own HTTP surface: ingest ({@code /_ingest/storage} for the storage stand-in's notifications,
 * {@code /_ingest/cloudevent} for any binary-mode event) and admin ({@code /_admin/...}). Ingest answers 202
 * once the event is accepted; delivery happens afterwards.
 */
final class RelayApi extends ApiHandler {
  private static final long MAX_EVENT_BYTES = 16L * 1024 * 1024;

  private final EventarcRelay relay;

  RelayApi(EventarcRelay relay) {
    super(MAX_EVENT_BYTES);
    this.relay = relay;
  }

  @Override
  protected void serve(Request request) {
    try {
      route(request, request.method() + " " + String.join("/", request.segments()));
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("invalid", e.getMessage());
    }
  }

  private void route(Request request, String route) {
    switch (route) {
      case "POST _ingest/storage" -> {
        relay.storageListener().onFinalize(ObjectFinalized.fromJson(Json.parse(request.body())));
        accepted(request);
      }
      case "POST _ingest/cloudevent" -> {
        relay.publish(BinaryMode.parse(request));
        accepted(request);
      }
      case "GET _admin/counters" -> Responses.json(request.exchange(), 200, relay.counters().toJson());
      case "GET _admin/deliveries" -> {
        ArrayNode all = Json.array();
        for (DeliveryResult r : relay.results()) {
          ObjectNode n = all.addObject();
          n.put("eventId", r.eventId());
          n.put("type", r.type());
          n.put("target", r.target() == null ? null : r.target().toString());
          n.put("outcome", r.outcome().name());
          n.put("attempts", r.attempts());
          n.put("last", r.last());
          n.put("finishedAt", r.finishedAt().toString());
        }
        Responses.json(request.exchange(), 200, all);
      }
      case "GET _admin/events" -> {
        ArrayNode all = Json.array();
        for (CloudEvent e : relay.events()) {
          ObjectNode n = all.addObject();
          n.put("id", e.id());
          n.put("type", e.type());
          n.put("source", e.source());
          n.put("subject", e.subject());
          n.put("time", e.time() == null ? null : e.time().toString());
        }
        Responses.json(request.exchange(), 200, all);
      }
      case "POST _admin/redeliver" -> {
        String id = request.required("id");
        if (relay.redeliver(id).isEmpty()) {
          throw HttpError.notFound("No event with id " + id);
        }
        accepted(request);
      }
      case "POST _admin/routes" -> {
        URI target = URI.create(request.required("url"));
        Optional<String> topic = request.query("topic"); // a Pub/Sub trigger's topic, projects/P/topics/T
        if (topic.isPresent()) {
          relay.routeTopic(topic.get(), target);
        } else {
          relay.route(EventarcRelay.eventType(request.required("type")), target);
        }
        accepted(request);
      }
      default -> throw HttpError.notFound("Not Found");
    }
  }

  private static void accepted(Request request) {
    Responses.json(request.exchange(), 202, Json.object());
  }

  @Override
  protected void renderError(HttpExchange exchange, HttpError error) {
    ObjectNode body = Json.object();
    ObjectNode inner = body.putObject("error");
    inner.put("code", error.code());
    inner.put("message", error.getMessage());
    inner.put("status", error.status());
    Responses.json(exchange, error.code(), body);
  }
}
