package dev.once.run;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment the four functions get: what Terraform sets in production (project, topics, notify URL, mode,
 * secrets), pointed at this machine's emulators and stand-ins by the same variables the tests use. Anything else
 * in the runner's own environment (GEMINI_MODEL, ONCE_LEASE_SECONDS, …) reaches the functions unchanged.
 */
final class FunctionEnvironment {
  /** The stand-in accepts any non-empty key; this one is only ever sent to 127.0.0.1. */
  static final String STAND_IN_KEY = "local-stand-in-key";

  private FunctionEnvironment() {}

  static Map<String, String> of(RunConfig config, String webhookSecret) {
    Ports ports = config.ports();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", config.project());
    env.put("FIRESTORE_EMULATOR_HOST", ports.hostPort(Part.FIRESTORE));
    env.put("PUBSUB_EMULATOR_HOST", ports.hostPort(Part.PUBSUB));
    env.put("STORAGE_EMULATOR_HOST", ports.url(Part.STORAGE));
    if (config.realGemini()) {
      env.put("GEMINI_API_KEY", config.geminiApiKey());
    } else {
      env.put("GEMINI_API_KEY", STAND_IN_KEY);
      env.put("GEMINI_BASE_URL", ports.url(Part.GEMINI));
    }
    env.put("GEMINI_WEBHOOK_SECRET", webhookSecret);
    env.put("RESULTS_TOPIC", Topology.RESULTS_TOPIC);
    env.put("DEAD_LETTER_TOPIC", Topology.DEAD_LETTER_TOPIC);
    env.put("NOTIFY_URL", ports.url(Part.NOTIFY) + Topology.NOTIFY_PATH);
    env.put("ANALYSIS_MODE", config.mode().value());
    return env;
  }
}
