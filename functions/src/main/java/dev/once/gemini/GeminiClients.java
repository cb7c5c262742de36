package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.types.ClientOptions;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import dev.once.config.Settings;
import java.time.Duration;
import okhttp3.OkHttpClient;

/**
 * Builds the Gemini client: API key, optional base URL (a stand-in locally), and a bound on every call. Reads are
 * retried by the SDK; the paid and non-idempotent POSTs (generateContent, batches.create) are not ({@link
 * #noRetries()}), so every paid call is a try the ledger recorded. The HTTP client does not silently resend a
 * request whose connection was reset either: OkHttp does that by default, POSTs included, below the SDK's retries.
 */
public final class GeminiClients {
  /** Retries of idempotent calls inside the SDK; the whole call, retries included, stays within the timeout. */
  static final int SDK_ATTEMPTS = 3;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  private GeminiClients() {}

  public static Client create(Settings settings) {
    Duration timeout = settings.seconds(GeminiSetting.GEMINI_TIMEOUT_SECONDS);
    HttpOptions.Builder http = HttpOptions.builder()
        .timeout(Math.toIntExact(timeout.toMillis()))
        .retryOptions(HttpRetryOptions.builder().attempts(SDK_ATTEMPTS).initialDelay(0.5).maxDelay(5.0).build());
    settings.optional(GeminiSetting.GEMINI_BASE_URL).ifPresent(http::baseUrl);
    OkHttpClient transport = new OkHttpClient.Builder()
        .retryOnConnectionFailure(false)
        .connectTimeout(CONNECT_TIMEOUT)
        .callTimeout(timeout)
        .readTimeout(timeout)
        .writeTimeout(timeout)
        .build();
    return Client.builder()
        .apiKey(settings.required(GeminiSetting.GEMINI_API_KEY))
        .vertexAI(false)
        .httpOptions(http.build())
        .clientOptions(ClientOptions.builder().customHttpClient(transport).build())
        .build();
  }

  /** Per-call options for a POST that must not be repeated by the SDK (generateContent, batches.create). */
  static HttpOptions noRetries() {
    return HttpOptions.builder().retryOptions(HttpRetryOptions.builder().attempts(1).build()).build();
  }
}
