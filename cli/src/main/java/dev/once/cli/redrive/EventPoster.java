package dev.once.cli.redrive;

import dev.once.cli.Failure;
import dev.once.local.eventarc.BinaryMode;
import dev.once.wire.eventarc.CloudEvent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/**
 * POSTs a CloudEvent to a function as Eventarc does (binary mode: {@code ce-*} headers, the data as the body), with
 * an identity token when the function is private, bounded by a timeout. A timeout or a broken connection does not
 * mean the function did nothing: it may have run the event, which the ledger makes safe to send again.
 */
final class EventPoster {
  private final HttpClient http = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10))
      .build();
  private final Duration timeout;
  private final String idToken;

  /** @param idToken an OIDC identity token for Cloud Run's IAM check, or null for none (local functions) */
  EventPoster(Duration timeout, String idToken) {
    this.timeout = timeout;
    this.idToken = idToken;
  }

  /** What the function answered. */
  record Answer(int status, String body, long millis) {
    boolean ok() {
      return status / 100 == 2;
    }
  }

  Answer post(CloudEvent event, URI target) {
    HttpRequest request = BinaryMode.request(event, target, timeout);
    if (idToken != null) {
      request = HttpRequest.newBuilder(request, (name, value) -> true)
          .header("Authorization", "Bearer " + idToken).build();
    }
    long started = System.nanoTime();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      return new Answer(response.statusCode(), response.body(), (System.nanoTime() - started) / 1_000_000);
    } catch (HttpTimeoutException e) {
      throw Failure.remote("no answer from " + target + " within " + timeout.toSeconds() + " s: the function may"
          + " still be running the event (once inspect shows what it did; another re-drive is safe)", e);
    } catch (IOException e) {
      throw Failure.remote("could not deliver to " + target + ": " + Failure.reason(e) + " (the function may have"
          + " received it; another re-drive is safe)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Failure.remote("interrupted while delivering to " + target, e);
    }
  }
}
