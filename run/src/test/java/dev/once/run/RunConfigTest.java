package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.stack.LocalStack;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunConfigTest {
  private static final String[] NONE = {};

  @Test
  void withoutAKey_theStandInServesGemini_andTheFunctionsArePointedAtIt() {
    RunConfig config = RunConfig.parse(NONE, Map.of());
    assertFalse(config.realGemini());
    assertEquals(Mode.SYNC, config.mode());
    Map<String, String> env = config.stack().functionEnvironment();
    assertEquals("http://127.0.0.1:9090", env.get("GEMINI_BASE_URL"));
    assertEquals(LocalStack.STAND_IN_KEY, env.get("GEMINI_API_KEY"));
    assertEquals("127.0.0.1:8681", env.get("FIRESTORE_EMULATOR_HOST"));
    assertEquals("http://127.0.0.1:9023", env.get("STORAGE_EMULATOR_HOST"));
    assertEquals("http://127.0.0.1:9400/notify", env.get("NOTIFY_URL"));
    assertEquals("sync", env.get("ANALYSIS_MODE"));
  }

  @Test
  void withGeminiApiKey_theRealApiIsUsed_noBaseUrl_andBatchModeReconcilesEveryMinute() {
    RunConfig config = RunConfig.parse(new String[] {"--mode", "batch"}, Map.of("GEMINI_API_KEY", "k-123"));
    assertTrue(config.realGemini());
    Map<String, String> env = config.stack().functionEnvironment();
    assertFalse(env.containsKey("GEMINI_BASE_URL"), env.toString());
    assertEquals("k-123", env.get("GEMINI_API_KEY"));
    assertEquals("batch", env.get("ANALYSIS_MODE"));
    assertEquals(Duration.ofSeconds(60), config.reconcileEvery());
  }

  @Test
  void theDemo_neverSpendsMoney_evenWithAKeySet() {
    RunConfig config = RunConfig.parse(new String[] {"--demo"}, Map.of("GEMINI_API_KEY", "k-123"));
    assertFalse(config.realGemini());
    assertNull(config.reconcileEvery());
  }

  @Test
  void badArguments_areUsageErrors() {
    assertThrows(IllegalArgumentException.class, () -> RunConfig.parse(new String[] {"--mode", "async"}, Map.of()));
    assertThrows(IllegalArgumentException.class, () -> RunConfig.parse(new String[] {"--port", "1"}, Map.of()));
    assertThrows(IllegalArgumentException.class,
        () -> RunConfig.parse(NONE, Map.of("ONCE_RECONCILE_SECONDS", "soon")));
  }
}
