package dev.once.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.local.http.Json;
import dev.once.local.http.LocalServer;
import dev.once.local.http.Main;
import dev.once.local.http.StandIn;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The local {@code NOTIFY_URL}: answers every notification 200, prints one line per notification (the runner's
 * log shows it), and lists what it received at {@code GET /_admin/notifications} — the demo's evidence that each
 * result was notified once.
 */
public final class NotifyEndpoint implements StandIn {
  /** Notification bodies are small JSON documents; anything larger is cut when recorded. */
  private static final int MAX_BODY_BYTES = 1024 * 1024;

  /** One request: its path, {@code Idempotency-Key}, the status it got, and the result's status from the body. */
  public record Notification(String path, String idempotencyKey, int status, String messageId, String result,
      Instant at) {}

  private final List<Notification> received = new CopyOnWriteArrayList<>();
  private final PrintStream out;
  private final LocalServer server;

  private NotifyEndpoint(int port, PrintStream out) {
    this.out = out;
    this.server = LocalServer.start(port, this::handle);
  }

  public static NotifyEndpoint start(int port, PrintStream out) {
    return new NotifyEndpoint(port, out);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (path.startsWith("/_admin/")) {
        admin(exchange, exchange.getRequestMethod() + " " + path);
        return;
      }
      if (!exchange.getRequestMethod().equals("POST")) {
        exchange.getResponseHeaders().set("Allow", "POST");
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readNBytes(MAX_BODY_BYTES);
      }
      String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
      JsonNode json = parse(body);
      Notification notification = new Notification(path, key, 200, text(json.path("messageId")),
          text(json.path("result").path("status")), Instant.now());
      received.add(notification);
      exchange.sendResponseHeaders(200, -1);
      out.println("NOTIFIED " + notification.status() + " " + key + " " + notification.result());
      out.flush();
    }
  }

  private void admin(HttpExchange exchange, String route) throws IOException {
    switch (route) {
      case "GET /_admin/notifications" -> {
        ArrayNode all = Json.array();
        for (Notification n : received) {
          ObjectNode node = all.addObject();
          node.put("path", n.path());
          node.put("idempotencyKey", n.idempotencyKey());
          node.put("status", n.status());
          node.put("messageId", n.messageId());
          node.put("result", n.result());
          node.put("at", n.at().toString());
        }
        send(exchange, 200, Json.bytes(all));
      }
      case "GET /_admin/counters" -> {
        ObjectNode counters = Json.object();
        counters.put("received", received.size());
        send(exchange, 200, Json.bytes(counters));
      }
      default -> send(exchange, 404, "{\"error\":\"no admin route\"}".getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, body.length);
    exchange.getResponseBody().write(body);
  }

  private static JsonNode parse(byte[] body) {
    try {
      JsonNode node = Json.MAPPER.readTree(body);
      return node == null ? Json.object() : node;
    } catch (IOException e) {
      return Json.object();
    }
  }

  private static String text(JsonNode node) {
    return node.isMissingNode() || node.isNull() ? null : node.asText();
  }

  public List<Notification> received() {
    return List.copyOf(received);
  }

  @Override
  public String baseUrl() {
    return server.baseUrl();
  }

  @Override
  public void close() {
    server.close();
  }

  private static final String USAGE = """
      usage: NotifyEndpoint [--port N]
        The local NOTIFY_URL: answers every POST 200, prints 'NOTIFIED <status> <Idempotency-Key> <result status>'
        per notification and 'READY notify http://127.0.0.1:PORT' once it listens.
        Admin: GET /_admin/notifications, GET /_admin/counters.""";

  public static void main(String[] args) {
    Main.run("notify", args, Set.of("port", "help"), USAGE, cli -> start(cli.intValue("port", 0), System.out));
  }
}
