package dev.once.cli.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for the Gemini API's WebhookService (v1beta), for tests of {@code once webhook}: create, list, get,
 * delete, ping and rotateSigningSecret, with the request and resource shapes of Google's reference
 * (https://ai.google.dev/api/webhooks: {@code uri}, {@code subscribed_events}, {@code new_signing_secret} on create
 * only, {@code signing_secrets[].truncated_secret}, {@code state} enabled; RotateSigningSecret takes
 * {@code revocation_behavior} and answers {@code {"secret"}}) and Google's error body
 * ({@code {"error":{"code","message","status"}}}). The API key travels as {@code x-goog-api-key}.
 * It can hold its next answer back until it is closed, after doing what was asked: a call that happened while its
 * caller timed out.
 */
final class WebhookService implements AutoCloseable {
  static final String API_KEY = "test-key";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** One request as received. */
  record Call(String method, String path, String body) {}

  private final HttpServer server;
  private final Map<String, ObjectNode> webhooks = Collections.synchronizedMap(new LinkedHashMap<>());
  private final Map<String, List<String>> secrets = Collections.synchronizedMap(new LinkedHashMap<>());
  private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicBoolean stallNext = new AtomicBoolean();
  private final CountDownLatch closing = new CountDownLatch(1);

  WebhookService() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", this::handle);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  List<Call> calls() {
    return List.copyOf(calls);
  }

  Map<String, ObjectNode> webhooks() {
    return Map.copyOf(webhooks);
  }

  /** Every secret issued to a webhook, newest last. */
  List<String> secrets(String id) {
    return List.copyOf(secrets.getOrDefault(id, List.of()));
  }

  /** The next request is carried out, then answered only when this stand-in closes. */
  void stallNext() {
    stallNext.set(true);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String method = exchange.getRequestMethod();
      String path = exchange.getRequestURI().getPath();
      calls.add(new Call(method, path + (exchange.getRequestURI().getQuery() == null ? ""
          : "?" + exchange.getRequestURI().getQuery()), body));
      if (!API_KEY.equals(exchange.getRequestHeaders().getFirst("x-goog-api-key"))) {
        error(exchange, 400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT");
        return;
      }
      Answer answer = route(method, path, body);
      if (stallNext.getAndSet(false)) {
        closing.await(60, TimeUnit.SECONDS);
      }
      if (answer.status() == 200) {
        send(exchange, 200, answer.body());
      } else {
        error(exchange, answer.status(), answer.body().path("message").asText(), answer.body().path("status").asText());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private record Answer(int status, JsonNode body) {}

  private Answer route(String method, String path, String body) throws IOException {
    String prefix = "/v1beta/webhooks";
    if (!path.startsWith(prefix)) {
      return notFound("no such method " + path);
    }
    String rest = path.substring(prefix.length());
    if (rest.isEmpty() && method.equals("POST")) {
      return create(JSON.readTree(body.isEmpty() ? "{}" : body));
    }
    if (rest.isEmpty() && method.equals("GET")) {
      ObjectNode list = JSON.createObjectNode();
      ArrayNode all = list.putArray("webhooks");
      webhooks.values().forEach(all::add);
      return new Answer(200, list);
    }
    String id = rest.substring(1);
    String verb = "";
    int colon = id.indexOf(':');
    if (colon >= 0) {
      verb = id.substring(colon + 1);
      id = id.substring(0, colon);
    }
    ObjectNode webhook = webhooks.get(id);
    if (webhook == null) {
      return notFound("Webhook " + id + " not found.");
    }
    return switch (method + " " + verb) {
      case "GET " -> new Answer(200, webhook);
      case "DELETE " -> {
        webhooks.remove(id);
        yield new Answer(200, JSON.createObjectNode());
      }
      case "POST ping" -> new Answer(200, JSON.createObjectNode());
      case "POST rotateSigningSecret" -> {
        String behavior = JSON.readTree(body.isEmpty() ? "{}" : body).path("revocation_behavior").asText("");
        if (!behavior.isEmpty() && !behavior.equals("revoke_previous_secrets_after_h24")
            && !behavior.equals("revoke_previous_secrets_immediately")) {
          yield invalid("revocation_behavior " + behavior + " is not valid");
        }
        String secret = newSecret(id);
        yield new Answer(200, JSON.createObjectNode().put("secret", secret));
      }
      default -> notFound("no such method " + method + " " + path);
    };
  }

  /** The subscribed_events of the webhooks API reference (ai.google.dev/static/api/webhooks.md.txt). */
  static final Set<String> SUBSCRIBABLE = Set.of("batch.succeeded", "batch.expired", "batch.failed",
      "interaction.requires_action", "interaction.completed", "interaction.failed", "video.generated");

  private Answer create(JsonNode request) {
    if (!request.path("uri").isTextual() || !request.path("subscribed_events").isArray()
        || request.path("subscribed_events").isEmpty()) {
      return invalid("uri and subscribed_events are required");
    }
    for (JsonNode event : request.get("subscribed_events")) {
      if (!SUBSCRIBABLE.contains(event.asText())) {
        // The reference's enum has no batch.cancelled (the guide lists it): refused, as users report it.
        return invalid("subscribed_events: " + event.asText() + " is not a valid event");
      }
    }
    String id = "wh-" + ids.incrementAndGet();
    String now = Instant.now().toString();
    ObjectNode webhook = JSON.createObjectNode();
    webhook.put("id", id);
    if (request.hasNonNull("name")) {
      webhook.put("name", request.get("name").asText());
    }
    webhook.put("uri", request.get("uri").asText());
    webhook.set("subscribed_events", request.get("subscribed_events"));
    webhook.put("state", "enabled");
    webhook.put("create_time", now);
    webhook.put("update_time", now);
    webhooks.put(id, webhook);
    String secret = newSecret(id);
    ObjectNode answer = webhook.deepCopy();
    answer.put("new_signing_secret", secret);
    return new Answer(200, answer);
  }

  private String newSecret(String id) {
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    String secret = "whsec_" + Base64.getEncoder().encodeToString(key);
    secrets.computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>())).add(secret);
    ObjectNode webhook = webhooks.get(id);
    ArrayNode shown = webhook.putArray("signing_secrets");
    for (String s : secrets.get(id)) {
      shown.addObject().put("truncated_secret", s.substring(0, 10) + "…");
    }
    return secret;
  }

  private static Answer notFound(String message) {
    return new Answer(404, JSON.createObjectNode().put("message", message).put("status", "NOT_FOUND"));
  }

  private static Answer invalid(String message) {
    return new Answer(400, JSON.createObjectNode().put("message", message).put("status", "INVALID_ARGUMENT"));
  }

  private static void error(HttpExchange exchange, int code, String message, String status) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("code", code).put("message", message).put("status", status);
    send(exchange, code, body);
  }

  private static void send(HttpExchange exchange, int status, JsonNode body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    closing.countDown();
    server.stop(0);
  }
}
