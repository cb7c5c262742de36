package dev.once.local.http;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An HTTP endpoint for tests that records every request it receives and answers with scripted statuses (200 once
 * the script runs out), for checking what a stand-in sends to webhooks and notification URLs.
 */
public final class Receiver implements AutoCloseable {
  /** One request: lower-cased headers and the raw body. */
  public record Received(String path, Map<String, String> headers, byte[] body) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    public String text() {
      return new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private final LocalServer server;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  /** A scripted answer: a status, after a delay (a delay longer than the client's timeout is a timeout). */
  private record Answer(int status, java.time.Duration delay) {}

  private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();

  private Receiver() {
    server = LocalServer.start(0, this::record); // no request can come before the caller learns the URL
  }

  public static Receiver start() {
    return new Receiver();
  }

  private void record(HttpExchange exchange) throws IOException {
    Map<String, String> headers = new TreeMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
    byte[] body = exchange.getRequestBody().readAllBytes();
    received.add(new Received(exchange.getRequestURI().getPath(), headers, body));
    Answer answer = script.poll();
    if (answer != null && !answer.delay().isZero()) {
      try {
        Thread.sleep(answer.delay());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    exchange.sendResponseHeaders(answer == null ? 200 : answer.status(), -1);
    exchange.close();
  }

  /** The next requests are answered with these statuses, in order. */
  public void answerNext(Integer... statuses) {
    for (Integer status : statuses) {
      script.add(new Answer(status, java.time.Duration.ZERO));
    }
  }

  /** The next request is answered 200 only after {@code delay}: longer than the caller waits, it is a timeout. */
  public void stallNext(java.time.Duration delay) {
    script.add(new Answer(200, delay));
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

  @Override
  public void close() {
    server.close();
  }
}
