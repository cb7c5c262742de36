package dev.once.gemini;

import dev.once.pipeline.PipelineSetting;
import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import dev.once.config.Settings;
import java.time.Duration;

/** Builds the Gemini client: API key, optional base URL (a stand-in locally), and a bound on every call. */
public final class GeminiClients {
  /** Retries of idempotent calls inside the SDK; the whole call, retries included, stays within the timeout. */
  static final int SDK_ATTEMPTS = 3;

  private GeminiClients() {}

  public static Client create(Settings settings) {
    Duration timeout = settings.seconds(PipelineSetting.GEMINI_TIMEOUT_SECONDS);
    HttpOptions.Builder http = HttpOptions.builder()
        .timeout(Math.toIntExact(timeout.toMillis()))
        .retryOptions(HttpRetryOptions.builder().attempts(SDK_ATTEMPTS).initialDelay(0.5).maxDelay(5.0).build());
    settings.optional(PipelineSetting.GEMINI_BASE_URL).ifPresent(http::baseUrl);
    return Client.builder()
        .apiKey(settings.required(PipelineSetting.GEMINI_API_KEY))
        .vertexAI(false)
        .httpOptions(http.build())
        .build();
  }

  /** Per-call options for a POST that must not be repeated by the SDK (batches.create). */
  static HttpOptions noRetries() {
    return HttpOptions.builder().retryOptions(HttpRetryOptions.builder().attempts(1).build()).build();
  }
}
