package dev.once.gemini;

import com.google.genai.Client;
import dev.once.config.Settings;
import dev.once.local.gemini.GeminiStandIn;
import java.util.Map;

/** The functions' own Gemini client (their settings, their factory), pointed at a Gemini stand-in. */
final class StandInClient {
  private StandInClient() {}

  static Client of(GeminiStandIn gemini) {
    return GeminiClients.create(Settings.of(Map.of("GEMINI_API_KEY", "test-key", "GEMINI_BASE_URL", gemini.baseUrl(),
        "GEMINI_TIMEOUT_SECONDS", "10")));
  }
}
