package dev.once.local.storage;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.HttpError;
import dev.once.local.http.Json;
import dev.once.local.http.Request;
import dev.once.local.http.Responses;
import java.time.Duration;
import java.util.List;

/**
 * {@code /_admin/...}: the switches a test or demo in another process needs. Admin calls are neither counted
 * nor subject to injected failures.
 */
final class StorageAdmin {
  private final StorageStandIn standIn;

  StorageAdmin(StorageStandIn standIn) {
    this.standIn = standIn;
  }

  void serve(Request request, List<String> path) {
    try {
      route(request, request.method() + " " + String.join("/", path));
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("invalid", e.getMessage());
    }
  }

  private void route(Request request, String route) {
    switch (route) {
      case "GET counters" -> Responses.json(request.exchange(), 200, standIn.counters().toJson());
      case "POST counters/reset" -> {
        standIn.counters().reset();
        ok(request);
      }
      case "GET notifications" -> {
        ArrayNode all = Json.array();
        standIn.notifications().forEach(n -> all.add(Json.parseTrusted(n.toJson())));
        Responses.json(request.exchange(), 200, all);
      }
      case "POST fail" -> {
        standIn.failNext((int) longParam(request, "count"), request.longQuery("status").orElse(503L).intValue());
        ok(request);
      }
      case "POST latency" -> {
        standIn.latency(Duration.ofMillis(longParam(request, "ms")));
        ok(request);
      }
      case "POST notify-twice" -> {
        standIn.notifyTwice(Boolean.parseBoolean(request.query("enabled").orElse("true")));
        ok(request);
      }
      case "POST renotify" -> {
        ObjectFinalized event = standIn.renotify(param(request, "bucket"), param(request, "name"),
            longParam(request, "generation"));
        Responses.json(request.exchange(), 200, Json.parseTrusted(event.toJson()));
      }
      case "POST buckets" -> {
        standIn.createBucket(param(request, "name"));
        ok(request);
      }
      default -> throw HttpError.notFound("No admin route " + route);
    }
  }

  private static void ok(Request request) {
    ObjectNode body = Json.object();
    body.put("ok", true);
    Responses.json(request.exchange(), 200, body);
  }

  private static String param(Request request, String name) {
    return request.query(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }

  private static long longParam(Request request, String name) {
    return request.longQuery(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }
}
