package dev.once.local.http;

import dev.once.wire.http.Counters;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Responses;
import java.time.Duration;
import java.util.List;

/**
 * {@code /_admin/...} of a stand-in: the switches a test or demo in another process needs. The routes every
 * stand-in has are served here (its counters, the faults every API call meets); a stand-in's own routes are
 * {@code own}. A route that sends no answer of its own is answered {@code {"ok":true}}. Admin calls are neither
 * counted nor subject to injected failures; a bad value is a 400.
 */
public final class AdminRoutes {
  /** A stand-in's own routes: true when {@code route} ({@code "POST complete-all"}) was one of them. */
  public interface Own {
    boolean serve(Request request, String route);
  }

  private final Counters counters;
  private final Faults faults;
  private final Own own;

  public AdminRoutes(Counters counters, Faults faults, Own own) {
    this.counters = counters;
    this.faults = faults;
    this.own = own;
  }

  /** Serves {@code path} (what follows {@code /_admin/}). */
  public void serve(Request request, List<String> path) {
    String route = request.method() + " " + String.join("/", path);
    try {
      if (!common(request, route) && !own.serve(request, route)) {
        throw HttpError.notFound("No admin route " + route);
      }
      if (request.exchange().getResponseCode() == -1) {
        Responses.ok(request.exchange());
      }
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("invalid", e.getMessage());
    }
  }

  private boolean common(Request request, String route) {
    switch (route) {
      case "GET counters" -> Responses.json(request.exchange(), 200, counters.toJson());
      case "POST counters/reset" -> counters.reset();
      case "POST fail" -> faults.failNext((int) request.requiredLong("count"),
          request.longQuery("status").orElse(503L).intValue());
      case "POST latency" -> faults.latency(Duration.ofMillis(request.requiredLong("ms")));
      default -> {
        return false;
      }
    }
    return true;
  }
}
