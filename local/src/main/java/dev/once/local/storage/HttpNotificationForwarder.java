package dev.once.local.storage;

import dev.once.local.http.Pause;
import dev.once.local.http.RetryPolicy;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * POSTs each notification (its {@link ObjectFinalized#toJson() wire form}) to a URL, retrying with backoff, so a
 * relay reached by URL only receives them. What it gives up on is logged, never dropped silently.
 */
public final class HttpNotificationForwarder implements ObjectFinalizeListener {
  private static final Logger LOG = Logger.getLogger(HttpNotificationForwarder.class.getName());
  /** Six attempts from 100 ms apart, doubling up to 2 s. */
  private static final RetryPolicy RETRY =
      new RetryPolicy(6, Duration.ofMinutes(1), Duration.ofMillis(100), Duration.ofSeconds(2), 2.0);

  private final URI target;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  public HttpNotificationForwarder(URI target) {
    this.target = target;
  }

  @Override
  public void onFinalize(ObjectFinalized notification) {
    HttpRequest request = HttpRequest.newBuilder(target)
        .timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(notification.toJson()))
        .build();
    Instant first = Instant.now();
    String last;
    for (int attempt = 1;; attempt++) {
      try {
        int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        if (status / 100 == 2) {
          return;
        }
        last = "HTTP " + status;
      } catch (IOException e) {
        last = e.toString();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        last = "interrupted";
        break;
      }
      Optional<Duration> pause = RETRY.nextPause(attempt, first);
      if (pause.isEmpty() || !Pause.of(pause.get())) {
        break;
      }
    }
    LOG.warning("gave up forwarding finalize notification " + notification.eventId() + " for "
        + notification.bucket() + "/" + notification.name() + "#" + notification.generation() + " to " + target
        + " (last: " + last + ")");
  }
}
