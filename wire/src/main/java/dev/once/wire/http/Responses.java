package dev.once.wire.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/** Writing answers with the JDK server's quirks handled (an empty body must be announced as length -1). */
public final class Responses {
  private Responses() {}

  public static void json(HttpExchange exchange, int code, JsonNode body) {
    bytes(exchange, code, "application/json; charset=UTF-8", Json.bytes(body));
  }

  /** {@code {"ok":true}}: an admin switch was set. */
  public static void ok(HttpExchange exchange) {
    json(exchange, 200, Json.object().put("ok", true));
  }

  public static void bytes(HttpExchange exchange, int code, String contentType, byte[] body) {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    try {
      if (body.length == 0) {
        exchange.sendResponseHeaders(code, -1);
        return;
      }
      exchange.sendResponseHeaders(code, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing the response failed", e);
    }
  }

  public static void empty(HttpExchange exchange, int code) {
    try {
      exchange.sendResponseHeaders(code, -1);
    } catch (IOException e) {
      throw new UncheckedIOException("writing the response failed", e);
    }
  }
}
