package dev.once.local.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.wire.http.Json;
import dev.once.wire.http.Responses;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An answer made before it is sent, so a stand-in can carry a request out and then decide to send the answer, send
 * it late, or lose it ({@link AmbiguousFailure}).
 */
public record Reply(int status, String contentType, byte[] body, Map<String, String> headers) {
  public Reply {
    headers = Map.copyOf(headers);
  }

  public static Reply json(JsonNode body) {
    return new Reply(200, "application/json; charset=UTF-8", Json.bytes(body), Map.of());
  }

  public static Reply bytes(String contentType, byte[] body) {
    return new Reply(200, contentType, body, Map.of());
  }

  public static Reply empty() {
    return new Reply(200, null, new byte[0], Map.of());
  }

  public Reply withHeader(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new Reply(status, contentType, body, more);
  }

  public void send(HttpExchange exchange) {
    headers.forEach(exchange.getResponseHeaders()::set);
    if (contentType == null) {
      Responses.empty(exchange, status);
    } else {
      Responses.bytes(exchange, status, contentType, body);
    }
  }
}
