package dev.once.gemini;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * Why Gemini says a batch job ended FAILED: the {@code error} of its long-running operation ({@code batches.get}). The
 * Java SDK drops that field for the Gemini API (google-genai 2.3.0 {@code Batches.batchJobFromMldev} maps it only from
 * Vertex AI), so {@code BatchJob.error()} is always empty here; it is read from the operation itself, one GET, only for
 * a job that failed. An outage's failure (13 INTERNAL) and one for what the requests hold (3 INVALID_ARGUMENT) are
 * handled apart ({@code CompletionFlow}).
 */
public final class JobErrors {
  /** Google's endpoint, when no base URL is set. */
  static final String DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final String baseUrl;
  private final String apiKey;
  private final Duration timeout;

  public JobErrors(Optional<String> baseUrl, String apiKey, Duration timeout) {
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    this.baseUrl = baseUrl.map(url -> url.replaceAll("/+$", "")).orElse(DEFAULT_BASE_URL);
    this.apiKey = apiKey;
    this.timeout = timeout;
  }

  /**
   * The job's error, or empty when its operation gives none.
   *
   * @param name {@code batches/ID}
   * @throws IllegalStateException when the operation cannot be read (the completion is tried again later)
   */
  public Optional<BatchError> of(String name) {
    if (!name.matches("batches/[A-Za-z0-9_-]{1,128}")) {
      throw new IllegalArgumentException("not a batch job name: " + name.substring(0, Math.min(name.length(), 80)));
    }
    HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1beta/" + name)).timeout(timeout)
        .header("x-goog-api-key", apiKey).GET().build();
    try {
      HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream body = response.body()) {
        if (response.statusCode() != 200) {
          throw new IllegalStateException("batches.get " + name + " answered " + response.statusCode());
        }
        return error(body).map(error -> new BatchError(error.path("code").asInt(2), error.path("status").asText(null),
            error.path("message").asText("")));
      }
    } catch (IOException e) {
      throw new IllegalStateException("could not read why " + name + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading why " + name + " failed", e);
    }
  }

  /**
   * The operation's top-level {@code error}, streamed: the rest (a failed job's partial inlined answers can run to
   * megabytes) is skipped, never held.
   */
  private static Optional<JsonNode> error(InputStream body) throws IOException {
    try (JsonParser parser = JSON.getFactory().createParser(body)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("batches.get answered no JSON object");
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if ("error".equals(field)) {
          JsonNode error = parser.readValueAsTree();
          return error != null && error.isObject() ? Optional.of(error) : Optional.empty();
        }
        parser.skipChildren();
      }
      return Optional.empty();
    }
  }
}
