package dev.once.run.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.local.Bounds;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** JSON over HTTP to the stand-ins' admin endpoints and the functions, every call bounded. */
final class Http {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  /** A hang guard on one call to a stand-in in this JVM or the runner's (the demo asks again when one fails). */
  static final Duration ADMIN_TIMEOUT = Bounds.CALL;
  /** The reconciler's own budget is 2 minutes a run. */
  static final Duration RECONCILE_TIMEOUT = Duration.ofMinutes(3);

  private Http() {}

  /** A call that got no usable answer: the message names the URL. */
  static final class Failed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  static JsonNode get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(ADMIN_TIMEOUT).GET().build());
  }

  static JsonNode post(String url) {
    return post(url, ADMIN_TIMEOUT);
  }

  static JsonNode post(String url, Duration timeout) {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
        .POST(HttpRequest.BodyPublishers.noBody()).build());
  }

  private static JsonNode send(HttpRequest request) {
    HttpResponse<String> response;
    try {
      response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new Failed(request.method() + " " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failed("interrupted during " + request.method() + " " + request.uri(), e);
    }
    if (response.statusCode() / 100 != 2) {
      throw new Failed(request.method() + " " + request.uri() + " answered " + response.statusCode() + ": "
          + response.body(), null);
    }
    try {
      return response.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(response.body());
    } catch (IOException e) {
      throw new Failed(request.method() + " " + request.uri() + " answered something that is not JSON", e);
    }
  }
}
