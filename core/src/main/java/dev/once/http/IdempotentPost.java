package dev.once.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.config.InvalidSetting;
import dev.once.config.Setting;
import dev.once.config.Settings;
import dev.once.entry.IdempotentHttp;
import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A POST that is an effect: sent from inside {@code Once.run} with the effect's key as its {@code Idempotency-Key}
 * header (the same on every try, so the receiver can drop a copy), bounded by a timeout the claim's lease is made to
 * cover first, and its answer classified by what it says about the POST:
 * <ul>
 *   <li>2xx: done. A 4xx other than 408, 409, 425 and 429: refused, for good (sending it again cannot help). Both
 *       are a {@link Response}.
 *   <li>429, 503, a refused connection or one never made within the timeout: not performed (the receiver did
 *       nothing): {@link Refusal#notPerformed}, released without counting the try, and retried.
 *   <li>Anything else — another 5xx, 408, 409 or 425 (the receiver still at work on the key), a redirect (not
 *       followed), a timeout after the request left, a reset: it may have happened. {@link PostFailed}, a try that
 *       counts against the policy's cap; retried with the same key unless the cap says not.
 * </ul>
 *
 * <pre>{@code
 * IdempotentPost mailer = IdempotentPost.to(URI.create("https://mail.example/v1/send"));
 * once.run(key, "email", Policy.atMostOnce(), attempt -> mailer.send(attempt, "application/json", body));
 * }</pre>
 */
public final class IdempotentPost {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  private static final int MAX_BODY_PREVIEW = 500;
  private static final ObjectMapper JSON = new ObjectMapper();
  /**
   * Client errors that are not a refusal: a timeout (408), throttling (429), and a receiver still working on the same
   * Idempotency-Key (409, 425, as the IETF idempotency-key draft answers a retry that overtakes its original).
   */
  private static final Set<Integer> TRANSIENT_CLIENT_ERRORS = Set.of(408, 409, 425, 429);
  /** Answers that say the receiver did nothing: throttled, or unavailable. */
  private static final Set<Integer> NOT_PERFORMED = Set.of(429, 503);

  /** Headers computed for each request (a signature over its body and time, say), beside the Idempotency-Key. */
  @FunctionalInterface
  public interface Headers {
    /** The headers of one try of the POST of {@code key} carrying {@code body}. */
    Map<String, String> of(IdempotencyKey key, byte[] body);
  }

  /**
   * What the endpoint answered for good: done ({@link #ok()}, 2xx) or refused (a 4xx other than 408, 409, 425, 429).
   *
   * @param body the first {@value #MAX_BODY_PREVIEW} bytes of the answer's body, as text
   */
  public record Response(int status, String body) {
    public boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  /** The POST failed in a way that leaves it unknown whether the endpoint carried it out. */
  public static final class PostFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PostFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final URI endpoint;
  private final Duration timeout;
  private final Headers headers;
  private final HttpClient http;

  private IdempotentPost(URI endpoint, Duration timeout, Headers headers) {
    if (!"https".equals(endpoint.getScheme()) && !"http".equals(endpoint.getScheme()) || endpoint.getHost() == null) {
      throw new IllegalArgumentException("an endpoint is an http(s) URL with a host, got " + endpoint);
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("a timeout is positive, got " + timeout);
    }
    this.endpoint = endpoint;
    this.timeout = timeout;
    this.headers = headers;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
  }

  /** POSTs to {@code endpoint}, each bounded by {@link #DEFAULT_TIMEOUT} (10 s). */
  public static IdempotentPost to(URI endpoint) {
    return new IdempotentPost(endpoint, DEFAULT_TIMEOUT, (key, body) -> Map.of());
  }

  /**
   * POSTs to the URL the environment variable {@code variable} holds: unset, blank or not an http(s) URL fails here,
   * naming the variable, so a function that needs it fails to start.
   */
  public static IdempotentPost toUrlIn(String variable) {
    return toUrlIn(Settings.fromEnvironment(), variable);
  }

  /** {@link #toUrlIn(String)}, from {@code settings}. */
  public static IdempotentPost toUrlIn(Settings settings, String variable) {
    Setting setting = new Setting(variable, null, "the http(s) URL this function POSTs to");
    String url = settings.required(setting);
    try {
      return to(URI.create(url));
    } catch (IllegalArgumentException e) {
      throw new InvalidSetting(setting, "is not an http(s) URL with a host: \"" + url + "\"");
    }
  }

  /** The same, each POST bounded by {@code value}, its answer read. */
  public IdempotentPost withTimeout(Duration value) {
    return new IdempotentPost(endpoint, value, headers);
  }

  /** The same, each request carrying the headers {@code more} computes for it. */
  public IdempotentPost withHeaders(Headers more) {
    return new IdempotentPost(endpoint, timeout, more);
  }

  public URI endpoint() {
    return endpoint;
  }

  /** How long one POST may take, its answer read: the least lease a holder needs before sending it. */
  public Duration timeout() {
    return timeout;
  }

  /**
   * {@link #post(Attempt, String, byte[])} as the effect's completion: done is the result {@code {"status": N}}, a
   * refusal is {@link Refusal#permanent} (the effect is rejected for good, with the endpoint's answer as its reason).
   */
  public Completion send(Attempt attempt, String contentType, byte[] body) {
    Response answer = post(attempt, contentType, body);
    if (!answer.ok()) {
      throw Refusal.permanent(endpoint + " refused with " + answer.status() + ": " + answer.body());
    }
    return Completion.of(Map.of("status", (long) answer.status()));
  }

  /** {@link #post(Attempt, String, byte[])} of {@code value} as JSON (Jackson). */
  public Response postJson(Attempt attempt, Object value) {
    byte[] body;
    try {
      body = JSON.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not serialisable as JSON: " + e.getOriginalMessage(), e);
    }
    return post(attempt, "application/json", body);
  }

  /**
   * Makes the attempt's lease cover the timeout (or refuses as not performed), then POSTs {@code body} with
   * {@code Idempotency-Key: } {@link #headerValue}({@link Attempt#downstreamKey}): the answer when it is done or
   * refused; {@link Refusal#notPerformed} or {@link PostFailed} otherwise, as the class comment says.
   */
  public Response post(Attempt attempt, String contentType, byte[] body) {
    // A POST is seen outside: a holder whose lease may run out during it must not send it.
    attempt.ensureLease(timeout);
    // The attempt's key, or KEY/rerun-N when an operator invalidated the effect on purpose: then a new request.
    return post(attempt.downstreamKey(), contentType, body);
  }

  /** The POST alone, outside a guarded effect (no lease to cover): as {@link #post(Attempt, String, byte[])}. */
  public Response post(IdempotencyKey key, String contentType, byte[] body) {
    String idempotencyKey = headerValue(key);
    HttpRequest.Builder request = HttpRequest.newBuilder(endpoint)
        .timeout(timeout)
        .header("Content-Type", contentType)
        .header(IdempotentHttp.KEY_HEADER, idempotencyKey)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    headers.of(key, body).forEach(request::header);
    long deadline = System.nanoTime() + timeout.toNanos();
    // The request timeout ends when the headers arrive; the deadline below also bounds reading the body, which a
    // slow or hostile endpoint could otherwise trickle past the function's timeout and the claim's lease.
    CompletableFuture<HttpResponse<InputStream>> call =
        http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    HttpResponse<InputStream> response;
    try {
      response = call.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      call.cancel(true);
      throw new PostFailed("POST " + endpoint + ": no answer within " + timeout, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof ConnectException || cause instanceof HttpConnectTimeoutException) {
        throw Refusal.notPerformed("POST " + endpoint + ": no connection (" + cause + "); nothing was sent", cause);
      }
      throw new PostFailed("POST " + endpoint + (cause instanceof HttpTimeoutException
          ? ": no answer within " + timeout : ": the connection failed: " + cause), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      call.cancel(true);
      throw new PostFailed("POST " + endpoint + ": interrupted", e);
    }
    int status = response.statusCode();
    String answer = preview(response.body(), deadline);
    if (status >= 200 && status < 300
        || status >= 400 && status < 500 && !TRANSIENT_CLIENT_ERRORS.contains(status)) {
      return new Response(status, answer);
    }
    if (NOT_PERFORMED.contains(status)) {
      throw Refusal.notPerformed("POST " + endpoint + ": the endpoint answered " + status + ", doing nothing", null);
    }
    throw new PostFailed("POST " + endpoint + ": the endpoint answered " + status, null);
  }

  /**
   * The {@code Idempotency-Key} header {@code key} is sent as, the same on every try: keys carry object names, which
   * may hold characters a header cannot, so those are percent-encoded. Encoded, a key may pass the 255 characters
   * that Stripe-like receivers (and {@link IdempotentHttp}) accept (an ordinary Japanese object name does, 9
   * characters per letter): such a key is sent as {@code sha256:} and the hex SHA-256 of its UTF-8
   * ({@code key.documentId()}), as stable and as unique.
   */
  public static String headerValue(IdempotencyKey key) {
    StringBuilder out = new StringBuilder();
    for (byte b : key.value().getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 0x21 && c <= 0x7e && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format("%02X", c));
      }
    }
    return out.length() <= IdempotentHttp.MAX_KEY_CHARS ? out.toString() : "sha256:" + Sha256.hex(key.value());
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
}
