package dev.once.local.eventarc;

import dev.once.local.http.RetryPolicy;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.http.Counters;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * POSTs one event to one function, as Eventarc does: retried with backoff while the answer is not a 2xx (or
 * there is none), until the policy's attempts or age run out. Each delivery runs on its own virtual thread.
 */
final class Deliverer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(Deliverer.class.getName());

  private final RetryPolicy policy;
  private final Duration requestTimeout;
  private final Counters counters;
  private final Consumer<DeliveryResult> onResult;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

  Deliverer(RetryPolicy policy, Duration requestTimeout, Counters counters, Consumer<DeliveryResult> onResult) {
    this.policy = policy;
    this.requestTimeout = requestTimeout;
    this.counters = counters;
    this.onResult = onResult;
  }

  CompletableFuture<DeliveryResult.Outcome> deliver(CloudEvent event, URI target) {
    CompletableFuture<DeliveryResult.Outcome> done = new CompletableFuture<>();
    try {
      executor.execute(() -> done.complete(run(event, target)));
    } catch (RejectedExecutionException stopped) {
      done.complete(finish(event, target, DeliveryResult.Outcome.ABANDONED, 0, "the relay is stopping"));
    }
    return done;
  }

  private DeliveryResult.Outcome run(CloudEvent event, URI target) {
    Instant first = Instant.now();
    String last = "";
    for (int attempt = 1;; attempt++) {
      counters.increment("attempts");
      if (attempt > 1) {
        counters.increment("retries");
      }
      try {
        int status = http.send(BinaryMode.request(event, target, requestTimeout),
            HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 == 2) {
          counters.increment("delivered");
          return finish(event, target, DeliveryResult.Outcome.DELIVERED, attempt, "HTTP " + status);
        }
        last = "HTTP " + status;
      } catch (IOException e) {
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return finish(event, target, DeliveryResult.Outcome.ABANDONED, attempt, "the relay stopped");
      }
      Optional<Duration> pause = policy.nextPause(attempt, first);
      if (pause.isEmpty()) {
        counters.increment("gaveUp");
        LOG.warning("eventarc relay gave up on event " + event.id() + " (" + event.type() + ", " + event.source()
            + ") for " + target + " after " + attempt + " attempts over "
            + Duration.between(first, Instant.now()).toMillis() + " ms; last answer: " + last);
        return finish(event, target, DeliveryResult.Outcome.GAVE_UP, attempt, last);
      }
      try {
        Thread.sleep(pause.get());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return finish(event, target, DeliveryResult.Outcome.ABANDONED, attempt, "the relay stopped");
      }
    }
  }

  private DeliveryResult.Outcome finish(CloudEvent event, URI target, DeliveryResult.Outcome outcome, int attempts,
      String last) {
    onResult.accept(new DeliveryResult(event.id(), event.type(), target, outcome, attempts, last, Instant.now()));
    return outcome;
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
