package dev.once.local.gemini;

import dev.once.local.http.Pause;
import dev.once.local.http.RetryPolicy;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.Counters;
import dev.once.wire.http.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Delivers batch webhooks the way the Gemini API does: a signed POST per URL, retried with backoff and the same
 * {@code webhook-id} until a 2xx, on its own threads so a slow receiver never holds up the API. A registered
 * (static) URL gets a Standard Webhooks HMAC signature; a job's own {@code webhookConfig.uris} (dynamic) get an
 * RS256 JWT (or a v1a Ed25519 signature, see {@link DynamicSignature}) in {@code webhook-signature}, made afresh
 * for every attempt. The {@link WebhookMode} can double, delay
 * or suppress a delivery. Every attempt is counted and recorded; what it gives up on is logged.
 */
final class WebhookSender implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(WebhookSender.class.getName());

  private final WebhookSigner signer;
  private final DynamicWebhookSigner dynamicSigner;
  private final Supplier<DynamicSignature> dynamicSignature;
  private final Counters counters;
  private final RetryPolicy retry;
  private final Duration timeout;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final List<WebhookDelivery> deliveries = new CopyOnWriteArrayList<>();

  /** Where a delivery goes, and whether it is signed as a dynamic (per-job) or static (registered) webhook. */
  record Target(URI uri, boolean dynamic) {}

  WebhookSender(WebhookSigner signer, DynamicWebhookSigner dynamicSigner, Supplier<DynamicSignature> dynamicSignature,
      Counters counters, RetryPolicy retry, Duration timeout) {
    this.signer = signer;
    this.dynamicSigner = dynamicSigner;
    this.dynamicSignature = dynamicSignature;
    this.counters = counters;
    this.retry = retry;
    this.timeout = timeout;
  }

  List<WebhookDelivery> deliveries() {
    return List.copyOf(deliveries);
  }

  void send(BatchJob.Snapshot job, List<Target> targets, WebhookMode mode, String baseUrl) {
    byte[] body = Json.bytes(WebhookPayload.of(job, baseUrl));
    String type = job.state().webhookType();
    for (Target target : targets) {
      switch (mode) {
        case WebhookMode.Never never -> {
          counters.increment("webhook.suppressed");
          deliveries.add(new WebhookDelivery(null, type, job.name(), target.uri(), target.dynamic(), 0, 0,
              new String(body, StandardCharsets.UTF_8), Instant.now()));
        }
        case WebhookMode.Normal normal -> executor.execute(() -> deliver(newId(), type, job.name(), target, body));
        case WebhookMode.TwiceSameId twice -> executor.execute(() -> {
          String id = newId();
          deliver(id, type, job.name(), target, body);
          deliver(id, type, job.name(), target, body);
        });
        case WebhookMode.TwiceNewIds twice -> executor.execute(() -> {
          deliver(newId(), type, job.name(), target, body);
          deliver(newId(), type, job.name(), target, body);
        });
        case WebhookMode.Late late -> executor.execute(() -> {
          if (Pause.of(late.delay())) {
            deliver(newId(), type, job.name(), target, body);
          }
        });
      }
    }
  }

  private void deliver(String id, String type, String batchName, Target target, byte[] body) {
    Instant first = Instant.now();
    for (int attempt = 1;; attempt++) {
      Instant now = Instant.now();
      HttpRequest request = HttpRequest.newBuilder(target.uri())
          .timeout(timeout)
          .header("Content-Type", "application/json")
          .header("webhook-id", id)
          .header("webhook-timestamp", Long.toString(now.getEpochSecond()))
          .header("webhook-signature", signature(target, id, now, body))
          .POST(HttpRequest.BodyPublishers.ofByteArray(body))
          .build();
      int status;
      String last;
      try {
        status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        last = "HTTP " + status;
      } catch (IOException e) {
        status = -1;
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      counters.increment("webhook.deliveries");
      deliveries.add(new WebhookDelivery(id, type, batchName, target.uri(), target.dynamic(), attempt, status,
          new String(body, StandardCharsets.UTF_8), Instant.now()));
      if (status / 100 == 2) {
        counters.increment("webhook.delivered");
        return;
      }
      Optional<Duration> pause = retry.nextPause(attempt, first);
      if (pause.isEmpty()) {
        counters.increment("webhook.failed");
        LOG.warning("gave up delivering webhook " + id + " (" + type + " " + batchName + ") to " + target.uri()
            + " after " + attempt + " attempts (last: " + last + ")");
        return;
      }
      if (!Pause.of(pause.get())) {
        return;
      }
    }
  }

  private String signature(Target target, String id, Instant now, byte[] body) {
    if (!target.dynamic()) {
      return signer.sign(id, now.getEpochSecond(), body);
    }
    return switch (dynamicSignature.get()) {
      case JWT -> dynamicSigner.jwt(target.uri(), id, now, body);
      case V1A -> dynamicSigner.v1a(id, now.getEpochSecond(), body);
    };
  }

  private static String newId() {
    return "msg_" + Ids.random(27);
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
