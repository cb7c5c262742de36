package dev.once.functions;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/** The HTTP functions' answers: a status code and a small JSON body {@code {"status": …}}, never a stack trace. */
final class HttpAnswer {
  private static final ObjectMapper JSON = new ObjectMapper();

  private HttpAnswer() {}

  static void send(HttpResponse response, int code, String status, Map<String, ?> details) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", status);
    body.putAll(details);
    response.setStatusCode(code);
    response.setContentType("application/json");
    response.appendHeader("Cache-Control", "no-store");
    try (OutputStream out = response.getOutputStream()) {
      out.write(JSON.writeValueAsBytes(body));
    }
  }

  static void send(HttpResponse response, int code, String status) throws IOException {
    send(response, code, status, Map.of());
  }
}
