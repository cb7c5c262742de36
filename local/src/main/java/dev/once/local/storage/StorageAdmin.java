package dev.once.local.storage;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.once.local.http.AdminRoutes;
import dev.once.local.http.Request;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import dev.once.wire.storage.ObjectFinalized;

/**
 * The storage stand-in's own {@code /_admin/...} routes: its notifications (list, double, send again) and buckets
 * (counters and faults: {@link AdminRoutes}).
 */
final class StorageAdmin implements AdminRoutes.Own {
  private final StorageStandIn standIn;

  StorageAdmin(StorageStandIn standIn) {
    this.standIn = standIn;
  }

  @Override
  public boolean serve(Request request, String route) {
    switch (route) {
      case "GET notifications" -> {
        ArrayNode all = Json.array();
        standIn.notifications().forEach(n -> all.add(Json.parseTrusted(n.toJson())));
        Responses.json(request.exchange(), 200, all);
      }
      case "POST notify-twice" -> standIn.notifyTwice(Boolean.parseBoolean(request.query("enabled").orElse("true")));
      case "POST renotify" -> {
        ObjectFinalized event = standIn.renotify(request.required("bucket"), request.required("name"),
            request.requiredLong("generation"));
        Responses.json(request.exchange(), 200, Json.parseTrusted(event.toJson()));
      }
      case "POST buckets" -> standIn.createBucket(request.required("name"));
      default -> {
        return false;
      }
    }
    return true;
  }
}
