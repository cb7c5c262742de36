package dev.once.entry;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.observe.Trace;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** HTTP functions' answers: a status code and a small JSON body {@code {"status": …}}, never a stack trace. */
public final class HttpAnswer {
  private static final ObjectMapper JSON = new ObjectMapper();

  private HttpAnswer() {}

  public static void send(HttpResponse response, int code, String status, Map<String, ?> details) throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", status);
    body.putAll(details);
    send(response, code, "application/json", JSON.writeValueAsBytes(body));
  }

  public static void send(HttpResponse response, int code, String status) throws IOException {
    send(response, code, status, Map.of());
  }

  /** Any body, as is. */
  public static void send(HttpResponse response, int code, String contentType, byte[] body) throws IOException {
    response.setStatusCode(code);
    response.setContentType(contentType);
    response.appendHeader("Cache-Control", "no-store");
    try (OutputStream out = response.getOutputStream()) {
      out.write(body);
    }
  }

  /**
   * Answers 405 {@code method_not_allowed}, with {@code Allow: POST}, to any method but POST, and says whether it
   * did. Functions whose call does work take POST only, so a probe (a health check's or a browser's GET) does none.
   */
  public static boolean refusedUnlessPost(HttpRequest request, HttpResponse response) throws IOException {
    if ("POST".equals(request.getMethod())) {
      return false;
    }
    response.appendHeader("Allow", "POST");
    send(response, 405, "method_not_allowed");
    return true;
  }

  /** The body, or null when it is longer than {@code limit}; a declared length over the limit is not read. */
  public static byte[] readAtMost(HttpRequest request, int limit) throws IOException {
    if (request.getContentLength() > limit) {
      return null;
    }
    try (InputStream in = request.getInputStream()) {
      byte[] body = in.readNBytes(limit + 1);
      return body.length > limit ? null : body;
    }
  }

  /** The request's trace: W3C {@code traceparent}, else Google's {@code X-Cloud-Trace-Context}. */
  public static Optional<Trace> traceOf(HttpRequest request) {
    return request.getFirstHeader(Trace.TRACEPARENT).flatMap(Trace::fromTraceparent)
        .or(() -> request.getFirstHeader("X-Cloud-Trace-Context").flatMap(Trace::fromCloudTraceContext));
  }
}
