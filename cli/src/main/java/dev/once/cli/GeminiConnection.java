package dev.once.cli;

import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import dev.once.gemini.GeminiSetting;
import dev.once.pipeline.HttpsOnly;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * The tool's Gemini client: GEMINI_API_KEY (required), GEMINI_BASE_URL only when it is a stand-in on this machine (a
 * leftover one elsewhere would receive the project's key), each call bounded and tried once.
 */
public final class GeminiConnection {
  private GeminiConnection() {}

  /** @param apiVersion the API version to call ({@code v1beta}), or null for the SDK's own */
  public static Client open(Context context, Duration timeout, String apiVersion, String forWhat) {
    String key = context.settings().optional(GeminiSetting.GEMINI_API_KEY)
        .orElseThrow(
            () -> Failure.usage("GEMINI_API_KEY is not set: " + forWhat + " needs the project's Gemini API key"));
    HttpOptions.Builder http = HttpOptions.builder()
        .timeout(Math.toIntExact(timeout.toMillis()))
        .retryOptions(HttpRetryOptions.builder().attempts(1).build());
    if (apiVersion != null) {
      http.apiVersion(apiVersion);
    }
    Optional<String> baseUrl = context.settings().optional(GeminiSetting.GEMINI_BASE_URL);
    if (baseUrl.isPresent() && !local(baseUrl.get())) {
      throw Failure.usage("GEMINI_BASE_URL is " + baseUrl.get() + ", not this machine: the Gemini API key is sent to"
          + " Google's API or to a stand-in on localhost only (unset GEMINI_BASE_URL)");
    }
    baseUrl.ifPresent(http::baseUrl);
    return Client.builder().apiKey(key).vertexAI(false).httpOptions(http.build()).build();
  }

  /** An http(s) URL to a loopback address: a stand-in on this machine. */
  static boolean local(String url) {
    try {
      URI uri = URI.create(url.strip());
      return uri.getHost() != null && HttpsOnly.isLoopback(uri.getHost());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
