package dev.once.local.http;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An HTTP endpoint for tests that records every request it receives and then answers as scripted: a status, or an
 * {@link AmbiguousFailure} (late, connection reset, 5xx) for a request it did record; 200 once the script runs out.
 * For checking what a stand-in sends to webhooks and notification URLs, and how a sender copes when its request
 * arrived but the answer did not. Counters: {@code received} (every request recorded) and {@code ambiguous}
 * (recorded, then failed ambiguously).
 */
public final class Receiver implements AutoCloseable {
  /** One request: lower-cased headers and the raw body. */
  public record Received(String path, Map<String, String> headers, byte[] body) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** A scripted answer: a plain status, or an ambiguous failure after recording. */
  private sealed interface Answer {}

  private record Status(int status) implements Answer {}

  private record Ambiguous(AmbiguousFailure failure) implements Answer {}

  private final LocalServer server;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();
  private final Counters counters = new Counters();

  private Receiver() {
    server = LocalServer.startResettable(0, this::record); // no request can come before the caller learns the URL
  }

  public static Receiver start() {
    return new Receiver();
  }

  private void record(HttpExchange exchange) throws IOException {
    Map<String, String> headers = new TreeMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
    byte[] body = exchange.getRequestBody().readAllBytes();
    received.add(new Received(exchange.getRequestURI().getPath(), headers, body));
    counters.increment("received");
    switch (script.poll()) {
      case null -> answer(exchange, 200);
      case Status status -> answer(exchange, status.status());
      case Ambiguous ambiguous -> {
        counters.increment("ambiguous");
        fail(exchange, ambiguous.failure());
      }
    }
  }

  private void fail(HttpExchange exchange, AmbiguousFailure failure) throws IOException {
    switch (failure) {
      case AmbiguousFailure.Late late -> {
        if (pause(late.delay())) {
          try {
            answer(exchange, 200);
          } catch (IOException clientGone) {
            // the client stopped waiting: the answer is lost, which is the point
          }
        }
      }
      case AmbiguousFailure.Reset reset -> server.reset(exchange);
      case AmbiguousFailure.ServerError error -> answer(exchange, error.status());
    }
  }

  private static void answer(HttpExchange exchange, int status) throws IOException {
    exchange.sendResponseHeaders(status, -1);
    exchange.close();
  }

  private static boolean pause(Duration delay) {
    try {
      Thread.sleep(delay);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The next requests are answered with these statuses, in order. */
  public void answerNext(Integer... statuses) {
    for (Integer status : statuses) {
      script.add(new Status(status));
    }
  }

  /** The next request is answered 200 only after {@code delay}: longer than the caller waits, it is a timeout. */
  public void stallNext(Duration delay) {
    ambiguousNext(1, AmbiguousFailure.late(delay));
  }

  /** The next {@code count} requests are recorded, then fail as {@code failure} says. */
  public void ambiguousNext(int count, AmbiguousFailure failure) {
    for (int i = 0; i < count; i++) {
      script.add(new Ambiguous(failure));
    }
  }

  public URI url(String path) {
    return URI.create(server.baseUrl() + path);
  }

  public List<Received> received() {
    return new ArrayList<>(received);
  }

  public List<Received> receivedOn(String path) {
    return received.stream().filter(r -> r.path().equals(path)).toList();
  }

  public Counters counters() {
    return counters;
  }

  @Override
  public void close() {
    server.close();
  }
}
