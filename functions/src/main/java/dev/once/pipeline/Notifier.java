package dev.once.pipeline;

import dev.once.entry.IdempotentHttp;
import dev.once.internal.key.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Notifies a person's endpoint by HTTP POST of a JSON summary, with an {@code Idempotency-Key} header so the
 * receiver can drop the copy that at-least-once delivery may bring, signed as Standard Webhooks
 * ({@link NotificationSigner}) so it can tell a result of this pipeline from anyone's POST. https only, but for a
 * loopback endpoint ({@link HttpsOnly}).
 */
public final class Notifier {
  /** How the endpoint answered, for the caller to decide done, retry or give up. */
  public sealed interface Result {
    record Delivered(int status) implements Result {}

    /** 4xx other than 408, 409, 425 and 429: sending it again cannot help. */
    record Refused(int status, String body) implements Result {}

    /** 5xx, 408, 409, 425, 429, a timeout or a broken connection: a later try may succeed. */
    record Failed(String reason) implements Result {}
  }

  private static final int MAX_BODY_PREVIEW = 500;
  /**
   * Client errors that are not a refusal: a timeout (408), throttling (429), and a receiver still working on the
   * same Idempotency-Key (409, 425, as the IETF idempotency-key draft answers a retry that overtakes its original).
   */
  private static final java.util.Set<Integer> TRANSIENT_CLIENT_ERRORS = java.util.Set.of(408, 409, 425, 429);

  private final HttpClient http;
  private final URI endpoint;
  private final Duration timeout;
  private final NotificationSigner signer;

  public Notifier(URI endpoint, Duration timeout, NotificationSigner signer) {
    if (!HttpsOnly.allows(endpoint)) {
      throw new IllegalArgumentException("NOTIFY_URL must be an https URL (http only to this machine), got " + endpoint);
    }
    this.endpoint = endpoint;
    this.timeout = timeout;
    this.signer = signer;
    this.http = HttpClient.newBuilder()
        .connectTimeout(timeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .build();
  }

  /** How long one POST may take, its answer read: the least lease a holder needs before sending it. */
  public Duration timeout() {
    return timeout;
  }

  public Result notify(String idempotencyKey, byte[] json) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(endpoint)
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", headerSafe(idempotencyKey))
        .POST(HttpRequest.BodyPublishers.ofByteArray(json));
    signer.headers(idempotencyKey, json).forEach(builder::header);
    HttpRequest request = builder.build();
    long deadline = System.nanoTime() + timeout.toNanos();
    // The request timeout ends when the headers arrive; the deadline below also bounds reading the body, which a
    // slow or hostile endpoint could otherwise trickle past the function's timeout and the claim's lease.
    CompletableFuture<HttpResponse<InputStream>> call = http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
    try {
      HttpResponse<InputStream> response = call.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      int status = response.statusCode();
      String body = preview(response.body(), deadline);
      if (status >= 200 && status < 300) {
        return new Result.Delivered(status);
      }
      if (status >= 400 && status < 500 && !TRANSIENT_CLIENT_ERRORS.contains(status)) {
        return new Result.Refused(status, body);
      }
      return new Result.Failed("the endpoint answered " + status);
    } catch (TimeoutException e) {
      call.cancel(true);
      return new Result.Failed("no answer within " + timeout);
    } catch (ExecutionException e) {
      return new Result.Failed(e.getCause() instanceof HttpTimeoutException
          ? "no answer within " + timeout : "connection failed: " + e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      call.cancel(true);
      return new Result.Failed("interrupted");
    }
  }

  /** At most {@value #MAX_BODY_PREVIEW} bytes of the body, read before the deadline; the rest is not read. */
  private static String preview(InputStream body, long deadlineNanos) {
    CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
      try (body) {
        return body.readNBytes(MAX_BODY_PREVIEW + 1);
      } catch (IOException e) {
        return new byte[0];
      }
    });
    try {
      byte[] bytes = read.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
      String text = new String(bytes, 0, Math.min(bytes.length, MAX_BODY_PREVIEW), StandardCharsets.UTF_8);
      return bytes.length > MAX_BODY_PREVIEW ? text + "…" : text;
    } catch (TimeoutException | ExecutionException e) {
      closeQuietly(body);
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly(body);
      return "";
    }
  }

  private static void closeQuietly(InputStream body) {
    try {
      body.close();
    } catch (IOException ignored) {
      // closing only stops the read
    }
  }

  /**
   * Keys carry object names, which may hold characters a header cannot: those are percent-encoded, so the
   * header is the same on every try. Encoded, a key may pass the 255 characters that Stripe-like receivers (and
   * {@link IdempotentHttp}) accept: an ordinary Japanese object name does, 9 characters per letter. Such a key is
   * sent as {@code sha256:} and the hex SHA-256 of its UTF-8 ({@code IdempotencyKey.documentId()}), as stable and as unique.
   */
  static String headerSafe(String key) {
    StringBuilder out = new StringBuilder(key.length());
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 0x21 && c <= 0x7e && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format("%02X", c));
      }
    }
    return out.length() <= IdempotentHttp.MAX_KEY_CHARS ? out.toString() : "sha256:" + Sha256.hex(key);
  }

}
