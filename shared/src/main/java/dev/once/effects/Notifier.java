package dev.once.effects;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/**
 * Notifies a person's endpoint by HTTP POST of a JSON summary, with an {@code Idempotency-Key} header so the
 * receiver can drop the copy that at-least-once delivery may bring.
 */
public final class Notifier {
  /** How the endpoint answered, for the caller to decide done, retry or give up. */
  public sealed interface Result {
    record Delivered(int status) implements Result {}

    /** 4xx other than 408/429: sending it again cannot help. */
    record Refused(int status, String body) implements Result {}

    /** 5xx, 408, 429, a timeout or a broken connection: a later try may succeed. */
    record Failed(String reason) implements Result {}
  }

  private static final int MAX_BODY_PREVIEW = 500;

  private final HttpClient http;
  private final URI endpoint;
  private final Duration timeout;

  public Notifier(URI endpoint, Duration timeout) {
    if (!"https".equals(endpoint.getScheme()) && !"http".equals(endpoint.getScheme())) {
      throw new IllegalArgumentException("NOTIFY_URL must be an http(s) URL, got " + endpoint);
    }
    this.endpoint = endpoint;
    this.timeout = timeout;
    this.http = HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  public Result notify(String idempotencyKey, byte[] json) {
    HttpRequest request = HttpRequest.newBuilder(endpoint)
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", headerSafe(idempotencyKey))
        .POST(HttpRequest.BodyPublishers.ofByteArray(json))
        .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      int status = response.statusCode();
      if (status >= 200 && status < 300) {
        return new Result.Delivered(status);
      }
      if (status >= 400 && status < 500 && status != 408 && status != 429) {
        return new Result.Refused(status, preview(response.body()));
      }
      return new Result.Failed("the endpoint answered " + status);
    } catch (HttpTimeoutException e) {
      return new Result.Failed("no answer within " + timeout);
    } catch (IOException e) {
      return new Result.Failed("connection failed: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result.Failed("interrupted");
    }
  }

  /**
   * Keys carry object names, which may hold characters a header cannot: those are percent-encoded, so the
   * header is the same on every try.
   */
  static String headerSafe(String key) {
    StringBuilder out = new StringBuilder(key.length());
    for (byte b : key.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 0x21 && c <= 0x7e && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format("%02X", c));
      }
    }
    return out.toString();
  }

  private static String preview(String body) {
    return body == null ? "" : body.length() <= MAX_BODY_PREVIEW ? body : body.substring(0, MAX_BODY_PREVIEW) + "…";
  }
}
