package dev.once.cli.redrive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.auth.oauth2.GoogleCredentials;
import dev.once.cli.Failure;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * Reads an object generation's resource from the Cloud Storage JSON API ({@code objects.get} with
 * {@code generation}): the very JSON Eventarc puts in a finalize event's data. Google's API with the application
 * default credentials, or a stand-in ({@code STORAGE_EMULATOR_HOST}) without any.
 */
final class ObjectResources {
  static final String GOOGLE = "https://storage.googleapis.com";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String baseUrl;
  private final boolean google;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  /** @param baseUrl {@link #GOOGLE}, or a stand-in's root ({@code http://127.0.0.1:9023}) */
  ObjectResources(String baseUrl) {
    String trimmed = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.baseUrl = trimmed.contains("://") ? trimmed : "http://" + trimmed;
    this.google = GOOGLE.equals(this.baseUrl);
  }

  String describe() {
    return google ? "Cloud Storage" : "the Cloud Storage stand-in at " + baseUrl;
  }

  /** The object resource as JSON text, or empty when that generation does not exist (any more). */
  Optional<String> get(ObjectLocation object) {
    String url = baseUrl + "/storage/v1/b/" + encode(object.bucket()) + "/o/" + encode(object.name())
        + "?generation=" + object.generation();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET();
    if (google) {
      request.header("Authorization", "Bearer " + accessToken());
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw Failure.remote("could not read " + object + " from " + describe() + ": " + Failure.reason(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Failure.remote("interrupted while reading " + object, e);
    }
    if (response.statusCode() == 404) {
      return Optional.empty();
    }
    if (response.statusCode() != 200) {
      throw Failure.remote(describe() + " answered " + response.statusCode() + " for " + object + ": "
          + Failure.reason(new IllegalStateException(response.body())), null);
    }
    try {
      JsonNode resource = JSON.readTree(response.body());
      if (!resource.isObject() || !object.name().equals(resource.path("name").asText())) {
        throw Failure.remote(describe() + " answered something other than " + object + "'s resource", null);
      }
    } catch (IOException e) {
      throw Failure.remote(describe() + " answered a body that is not JSON for " + object, e);
    }
    return Optional.of(response.body());
  }

  /** Object names hold '/', spaces and anything else: every reserved byte is percent-encoded. */
  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static String accessToken() {
    try {
      GoogleCredentials credentials = GoogleCredentials.getApplicationDefault()
          .createScoped("https://www.googleapis.com/auth/devstorage.read_only");
      credentials.refreshIfExpired();
      return credentials.getAccessToken().getTokenValue();
    } catch (IOException | RuntimeException e) {
      throw Failure.remote("no application default credentials to read Cloud Storage with (gcloud auth"
          + " application-default login): " + Failure.reason(e), e);
    }
  }
}
