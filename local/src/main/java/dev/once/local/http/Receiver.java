package dev.once.local.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.Counters;
import dev.once.wire.http.Json;
import dev.once.wire.http.LocalServer;
import dev.once.wire.http.Responses;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * An HTTP endpoint that records every request it receives and then answers as scripted: a status, or an
 * {@link AmbiguousFailure} (late, connection reset, 5xx) for a request it did record; 200 once the script runs out.
 * The local {@code NOTIFY_URL} (tests, dev/run), and what checks the webhooks and notifications a stand-in sends
 * and how a sender copes when its request arrived but the answer did not. Counters: {@code received} (every
 * request recorded) and {@code ambiguous} (recorded, then failed ambiguously). {@code GET /_admin/received} lists
 * what it recorded, for a reader in another process (dev/demo); requests under {@code /_admin/} are not recorded.
 * {@link #verifying} makes it a receiver of signed notifications: like a real one, it answers 401 to a request whose
 * Standard Webhooks signature does not verify, or whose timestamp is more than 5 minutes off (counted
 * {@code unverified}; the script is kept for the next signed one).
 */
public final class Receiver implements AutoCloseable {
  /**
   * One request: lower-cased headers, the raw body, and the status it was answered (a late answer's too; 0 when
   * the connection was reset instead).
   */
  public record Received(String path, Map<String, String> headers, byte[] body, int status) {
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

  private record Held(Faults.Gate gate) implements Answer {}

  /** Standard Webhooks' replay window: a receiver refuses a timestamp further off than this. */
  private static final long TOLERANCE_SECONDS = 5 * 60;

  private final LocalServer server;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();
  private final Counters counters = new Counters();
  private final List<Consumer<Received>> listeners = new CopyOnWriteArrayList<>();
  private volatile WebhookSigner verifier;

  private Receiver(int port) {
    server = LocalServer.startResettable(port, this::handle);
  }

  /** On a free port: no request can come before the caller learns the URL. */
  public static Receiver start() {
    return start(0);
  }

  public static Receiver start(int port) {
    return new Receiver(port);
  }

  /** From now on, requests must carry a Standard Webhooks signature by {@code signer}'s secret; others get 401. */
  public Receiver verifying(WebhookSigner signer) {
    this.verifier = signer;
    return this;
  }

  /** Whether a request passes the verifying receiver's check (always, when it verifies nothing). */
  private boolean verified(Map<String, String> headers, byte[] body) {
    WebhookSigner signer = verifier;
    if (signer == null) {
      return true;
    }
    String timestamp = headers.get("webhook-timestamp");
    try {
      if (timestamp == null
          || Math.abs(Instant.now().getEpochSecond() - Long.parseLong(timestamp)) > TOLERANCE_SECONDS) {
        return false;
      }
    } catch (NumberFormatException e) {
      return false;
    }
    return signer.verify(headers.get("webhook-id"), timestamp, body, headers.get("webhook-signature"));
  }

  private void handle(HttpExchange exchange) throws IOException {
    if (exchange.getRequestURI().getPath().startsWith("/_admin/")) {
      admin(exchange);
      return;
    }
    Map<String, String> headers = new TreeMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
    byte[] body = exchange.getRequestBody().readAllBytes();
    if (!verified(headers, body)) {
      Received refused = new Received(exchange.getRequestURI().getPath(), headers, body, 401);
      received.add(refused);
      counters.increment("received");
      counters.increment("unverified");
      listeners.forEach(listener -> listener.accept(refused));
      answer(exchange, 401);
      return;
    }
    Answer answer = script.poll();
    int status = switch (answer) {
      case null -> 200;
      case Status s -> s.status();
      case Held h -> 200;
      case Ambiguous a -> a.failure() instanceof AmbiguousFailure.ServerError e ? e.status()
          : a.failure() instanceof AmbiguousFailure.Late ? 200 : 0;
    };
    Received request = new Received(exchange.getRequestURI().getPath(), headers, body, status);
    received.add(request);
    counters.increment("received");
    listeners.forEach(listener -> listener.accept(request));
    if (answer instanceof Held held) {
      held.gate().pass(); // recorded (its listeners told), then unanswered until the test releases it
      answer(exchange, status);
    } else if (answer instanceof Ambiguous ambiguous) {
      counters.increment("ambiguous");
      ambiguous.failure().inflict(() -> answer(exchange, 200), () -> server.reset(exchange),
          code -> answer(exchange, code));
    } else {
      answer(exchange, status);
    }
  }

  private static void answer(HttpExchange exchange, int status) {
    Responses.empty(exchange, status);
    exchange.close();
  }

  private void admin(HttpExchange exchange) {
    try (exchange) {
      if (!(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath()).equals("GET /_admin/received")) {
        Responses.empty(exchange, 404);
        return;
      }
      ArrayNode all = Json.array();
      for (Received r : received) {
        ObjectNode node = all.addObject();
        node.put("path", r.path());
        node.set("headers", Json.MAPPER.valueToTree(r.headers()));
        node.put("status", r.status());
        node.put("body", r.text());
      }
      Responses.json(exchange, 200, all);
    }
  }

  /** Called with each request once it is recorded, before it is answered. */
  public void onReceived(Consumer<Received> listener) {
    listeners.add(listener);
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

  /**
   * The next request is recorded, then held unanswered until the returned gate is released, then answered 200: a
   * request in flight for exactly as long as the test needs, where a stall of a fixed time is a guess at how long the
   * test will take on a loaded machine.
   */
  public Faults.Gate holdNext() {
    Faults.Gate gate = Faults.Gate.standalone("the next request to " + baseUrl());
    script.add(new Held(gate));
    return gate;
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

  public String baseUrl() {
    return server.baseUrl();
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
