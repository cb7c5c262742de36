package dev.once.testing;

import com.sun.net.httpserver.HttpExchange;
import dev.once.wire.http.LocalServer;
import dev.once.wire.http.Responses;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An HTTP endpoint a function's effect POSTs to (a mailer, a payment service, a webhook), on a free local port, that
 * behaves as a receiver honouring {@code Idempotency-Key}: the first request with a key is carried out (an
 * {@link #performed() effect}), a later one with the same key gets the first one's answer and does nothing more.
 * Every request is recorded. It can answer as scripted ({@link #answerNext}), and lose the answer of a request it
 * carried out ({@link #loseFirstAnswers}: the connection reset after the effect), the fault a retry turns into a
 * duplicate unless the key holds.
 */
public final class FakeEndpoint implements AutoCloseable {
  /** One request: its path, lower-cased headers, body, and the status it was answered (0: reset). */
  public record Request(String path, Map<String, String> headers, byte[] body, int status) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    public String idempotencyKey() {
      return header("Idempotency-Key");
    }

    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  private final LocalServer server;
  private final List<Request> received = new ArrayList<>();
  /** Effects carried out, by Idempotency-Key (a request without one is an effect of its own), with their answer. */
  private final Map<String, Integer> performed = new LinkedHashMap<>();
  private final ConcurrentLinkedQueue<Integer> script = new ConcurrentLinkedQueue<>();
  private int answersToLose;
  private int unkeyed;

  private FakeEndpoint() {
    server = LocalServer.startResettable(0, this::handle);
  }

  public static FakeEndpoint start() {
    return new FakeEndpoint();
  }

  /** The URL of {@code path} on this endpoint. */
  public URI uri(String path) {
    return URI.create(server.baseUrl() + path);
  }

  /** The URL of {@code /}. */
  public URI uri() {
    return uri("/");
  }

  /**
   * The next requests that are not replays are answered with these statuses, in order (then 200). A 5xx, 408, 409,
   * 425 or 429 does nothing (the receiver failed, or refused before acting: the next request with the key is carried
   * out); any other is the effect's answer, carried out and given again to every later request with its key.
   */
  public FakeEndpoint answerNext(Integer... statuses) {
    script.addAll(List.of(statuses));
    return this;
  }

  /** The next {@code count} requests carried out are carried out, then their connection reset: their answer lost. */
  public synchronized FakeEndpoint loseNextAnswers(int count) {
    answersToLose += count;
    return this;
  }

  /** Every request received, in order. */
  public synchronized List<Request> received() {
    return List.copyOf(received);
  }

  /** The effects carried out: one per Idempotency-Key (and one per request that came without a key). */
  public synchronized int performed() {
    return performed.size();
  }

  /** The keys of the effects carried out, in order (a request without a key counts as {@code (no key)#N}). */
  public synchronized List<String> performedKeys() {
    return new ArrayList<>(performed.keySet());
  }

  private void handle(HttpExchange exchange) throws IOException {
    Map<String, String> headers = new TreeMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
    byte[] body = exchange.getRequestBody().readAllBytes();
    String key = headers.get("idempotency-key");
    int status;
    boolean lose = false;
    synchronized (this) {
      Integer earlier = key == null ? null : performed.get(key);
      if (earlier != null) {
        status = earlier; // a replay: the first answer, nothing done again
      } else {
        Integer scripted = script.poll();
        status = scripted == null ? 200 : scripted;
        if (status < 500 && !Set.of(408, 409, 425, 429).contains(status)) {
          performed.put(key == null ? "(no key)#" + ++unkeyed : key, status);
          lose = answersToLose > 0;
          answersToLose -= lose ? 1 : 0;
        }
      }
      received.add(new Request(exchange.getRequestURI().getPath(), headers, body, lose ? 0 : status));
    }
    if (lose) {
      server.reset(exchange);
      return;
    }
    Responses.empty(exchange, status);
    exchange.close();
  }

  @Override
  public void close() {
    server.close();
  }
}
