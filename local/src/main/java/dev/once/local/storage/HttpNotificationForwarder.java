package dev.once.local.storage;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.logging.Logger;

/**
 * POSTs each notification (its {@link ObjectFinalized#toJson() wire form}) to a URL, retrying with backoff, so a
 * relay in another process receives them. What it gives up on is logged, never dropped silently.
 */
public final class HttpNotificationForwarder implements ObjectFinalizeListener {
  private static final Logger LOG = Logger.getLogger(HttpNotificationForwarder.class.getName());
  private static final int MAX_ATTEMPTS = 6;

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
    long backoffMillis = 100;
    String last = "";
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
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
      try {
        Thread.sleep(backoffMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      backoffMillis = Math.min(backoffMillis * 2, 2_000);
    }
    LOG.warning("gave up forwarding finalize notification " + notification.eventId() + " for "
        + notification.bucket() + "/" + notification.name() + "#" + notification.generation() + " to " + target
        + " (last: " + last + ")");
  }
}
