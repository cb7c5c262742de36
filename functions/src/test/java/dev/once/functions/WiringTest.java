package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.budget.Budget;
import dev.once.budget.DailyBudget;
import dev.once.config.InvalidSetting;
import dev.once.config.MissingSetting;
import dev.once.config.Settings;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.pipeline.PipelineSetting;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Each function reads its settings when it is constructed (instance start), and builds no client then. */
class WiringTest {
  /** What Terraform gives the functions, without the emulators. */
  private static Map<String, String> deployed() {
    Map<String, String> env = new HashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", "p");
    env.put("GEMINI_API_KEY", "k");
    env.put("GEMINI_WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    env.put("RESULTS_TOPIC", "results");
    env.put("DEAD_LETTER_TOPIC", "projects/q/topics/dead");
    env.put("BATCH_COMPLETIONS_TOPIC", "batch-completions");
    env.put("NOTIFY_URL", "https://example.com/notify");
    env.put("NOTIFY_SIGNING_SECRET", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD");
    env.put("RESULTS_SIGNING_KEY", TestSignatures.RESULTS_KEY);
    return env;
  }

  private static Clients clients(Map<String, String> env) {
    return new Clients(Settings.of(env));
  }

  private static final Map<String, Function<Clients, Object>> FUNCTIONS = Map.of(
      "DocumentUploaded", DocumentUploaded::new, "MessageDelivered", MessageDelivered::new,
      "GeminiWebhook", GeminiWebhook::new, "BatchCompleted", BatchCompleted::new,
      "GeminiReconciler", GeminiReconciler::new);

  @Test
  void everyFunction_startsWithTheDeployedSettings_andBuildsNoClient() {
    FUNCTIONS.forEach((name, function) -> {
      Map<String, String> env = deployed();
      env.put("GEMINI_DAILY_BUDGET_USD", "25");
      Clients clients = clients(env);
      function.apply(clients);
      assertFalse(clients.firestore.isBuilt() || clients.gemini.isBuilt() || clients.storage.isBuilt()
          || clients.publisher.isBuilt(), name + " built a client at start");
    });
  }

  @Test
  void aMissingSetting_failsTheStart_namingTheVariable() {
    assertMissing("RESULTS_TOPIC", DocumentUploaded::new);
    assertMissing("GEMINI_API_KEY", DocumentUploaded::new);
    assertMissing("NOTIFY_URL", MessageDelivered::new);
    assertMissing("DEAD_LETTER_TOPIC", MessageDelivered::new);
    assertMissing("NOTIFY_SIGNING_SECRET", MessageDelivered::new);
    assertMissing("RESULTS_SIGNING_KEY", MessageDelivered::new);
    assertMissing("RESULTS_SIGNING_KEY", DocumentUploaded::new);
    assertMissing("RESULTS_SIGNING_KEY", BatchCompleted::new);
    assertMissing("RESULTS_SIGNING_KEY", GeminiReconciler::new);
    assertMissing("RESULTS_TOPIC", GeminiReconciler::new);
    assertMissing("BATCH_COMPLETIONS_TOPIC", GeminiWebhook::new);
    assertMissing("RESULTS_TOPIC", BatchCompleted::new);
    assertMissing("GEMINI_API_KEY", BatchCompleted::new);
  }

  @Test
  void anInvalidSetting_failsTheStart_namingTheVariableAndItsValue() {
    assertInvalid("ANALYSIS_MODE", "later", DocumentUploaded::new);
    assertInvalid("MAX_DOCUMENT_BYTES", "-1", DocumentUploaded::new);
    assertInvalid("ONCE_LEASE_SECONDS", "ten", DocumentUploaded::new);
    assertInvalid("GEMINI_PRICES", "flash=cheap", DocumentUploaded::new);
    assertInvalid("GEMINI_TIMEOUT_SECONDS", "0", GeminiReconciler::new);
    assertInvalid("RESULTS_TOPIC", "projects/p/subscriptions/x", BatchCompleted::new);
    assertInvalid("BATCH_COMPLETIONS_TOPIC", "projects/p/subscriptions/x", GeminiWebhook::new);
    assertInvalid("NOTIFY_URL", "ftp://example.com/x", MessageDelivered::new);
    assertInvalid("NOTIFY_URL", "http://example.com/notify", MessageDelivered::new); // https only, but to 127.0.0.1
    assertInvalid("GEMINI_WEBHOOK_JWKS_URL", "http://keys.example.com/jwks.json", GeminiWebhook::new);
    assertInvalid("NOTIFY_SIGNING_SECRET", "not-a-secret", MessageDelivered::new);
    assertInvalid("RESULTS_SIGNING_KEY", "whsec_c2hvcnQ=", DocumentUploaded::new);
    assertInvalid("RECORDS_RETENTION_DAYS", "7", BatchCompleted::new);
    assertInvalid("NOTIFY_TIMEOUT_SECONDS", "soon", MessageDelivered::new);
    assertInvalid("GEMINI_WEBHOOK_SECRET", "not-a-secret", GeminiWebhook::new);
    assertInvalid("GEMINI_WEBHOOK_URL", "webhook.example.com/hook", GeminiWebhook::new);
    assertInvalid("GEMINI_WEBHOOK_URL", "webhook.example.com/hook", DocumentUploaded::new);
    assertInvalid("GEMINI_WEBHOOK_JWKS_URL", "file:///etc/keys.json", GeminiWebhook::new);
    assertInvalid("GEMINI_DAILY_BUDGET_USD", "ten", DocumentUploaded::new);
    assertInvalid("GEMINI_DAILY_BUDGET_USD", "-5", GeminiReconciler::new);
    assertInvalid("GEMINI_DAILY_BUDGET_USD", "0.0000001", DocumentUploaded::new);
    assertInvalid("GEMINI_DAILY_BUDGET_USD", "5000000", DocumentUploaded::new);
    assertInvalid("ONCE_BUDGET_TIMEZONE", "Mars/Olympus", DocumentUploaded::new);
    // Batch mode's gathering: checked by the reconciler whatever the mode (it submits what a batch revision queued).
    assertInvalid("BATCH_MAX_DOCUMENTS", "5001", GeminiReconciler::new);
    assertInvalid("BATCH_MAX_BYTES", "1500000001", GeminiReconciler::new);
    assertInvalid("BATCH_INLINE_MAX_BYTES", "19000001", GeminiReconciler::new);
    assertInvalid("BATCH_MAX_WAIT_SECONDS", "-1", GeminiReconciler::new);
    assertInvalid("BATCH_MAX_JOBS_IN_FLIGHT", "101", GeminiReconciler::new);
  }

  @Test
  void theDailyBudget_isInDollarsToTheMicroDollar_overADayInItsZone_andNeedsAPricedModel() {
    assertEquals(25_000_000L, PipelineSettings.microUsd("25"));
    assertEquals(500_000L, PipelineSettings.microUsd("0.50"));
    assertEquals(1L, PipelineSettings.microUsd("0.000001"));
    assertEquals(ZoneOffset.UTC, PipelineSettings.budgetZone(Settings.of(Map.of("ONCE_BUDGET_TIMEZONE", " "))));
    assertEquals(ZoneId.of("Europe/Paris"),
        PipelineSettings.budgetZone(Settings.of(Map.of("ONCE_BUDGET_TIMEZONE", "Europe/Paris"))));

    Map<String, String> blank = deployed();
    blank.put("GEMINI_DAILY_BUDGET_USD", ""); // what Terraform sets for no cap
    assertEquals(Budget.NONE, Wiring.budget(clients(blank)));
    Map<String, String> capped = deployed();
    capped.put("GEMINI_DAILY_BUDGET_USD", "25");
    DailyBudget budget = (DailyBudget) Wiring.budget(clients(capped));
    assertEquals(25_000_000L, budget.limitMicroUsd());

    Map<String, String> unpriced = deployed();
    unpriced.put("GEMINI_DAILY_BUDGET_USD", "25");
    unpriced.put("GEMINI_MODEL", "house-model");
    InvalidSetting e = assertThrows(InvalidSetting.class, () -> new DocumentUploaded(clients(unpriced)));
    assertTrue(e.getMessage().startsWith("GEMINI_DAILY_BUDGET_USD") && e.getMessage().contains("GEMINI_PRICES"),
        e.getMessage());
    unpriced.put("GEMINI_PRICES", "house-model=0.1/0.4");
    new DocumentUploaded(clients(unpriced));
  }

  @Test
  void theWebhook_startsWithEitherConfiguration_andFailsWithNeither_namingBoth() {
    Map<String, String> dynamicOnly = deployed();
    dynamicOnly.remove("GEMINI_WEBHOOK_SECRET");
    dynamicOnly.put("GEMINI_WEBHOOK_URL", "https://europe-west1-p.cloudfunctions.net/once-gemini-webhook");
    new GeminiWebhook(clients(dynamicOnly));
    Map<String, String> both = new HashMap<>(dynamicOnly);
    both.put("GEMINI_WEBHOOK_SECRET", deployed().get("GEMINI_WEBHOOK_SECRET"));
    new GeminiWebhook(clients(both));

    Map<String, String> neither = deployed();
    neither.remove("GEMINI_WEBHOOK_SECRET");
    MissingSetting e = assertThrows(MissingSetting.class, () -> new GeminiWebhook(clients(neither)));
    assertTrue(e.getMessage().contains("GEMINI_WEBHOOK_URL") && e.getMessage().contains("GEMINI_WEBHOOK_SECRET"),
        e.getMessage());
  }

  /**
   * The public function holds no Gemini key: it starts without GEMINI_API_KEY and the results topic (the other
   * functions fail without them), and an invalid Gemini setting does not stop it, since it reads none.
   */
  @Test
  void theWebhook_startsWithoutAGeminiKeyOrTheResultsTopic() {
    Map<String, String> env = deployed();
    env.remove("GEMINI_API_KEY");
    env.remove("RESULTS_TOPIC");
    env.put("GEMINI_TIMEOUT_SECONDS", "0");
    env.put("GEMINI_PRICES", "flash=cheap");
    Clients clients = clients(env);
    new GeminiWebhook(clients);
    assertFalse(clients.gemini.isBuilt() || clients.prices.isBuilt());
    assertThrows(MissingSetting.class, () -> new BatchCompleted(clients(env)));
  }

  @Test
  void topicSettings_acceptIdsAndFullNames() {
    Clients clients = clients(deployed());
    assertEquals("projects/p/topics/results", clients.topic(PipelineSetting.RESULTS_TOPIC));
    assertEquals("projects/q/topics/dead", clients.topic(PipelineSetting.DEAD_LETTER_TOPIC));
  }

  @Test
  void analysisMode_isSyncOrBatch() {
    assertEquals(DocumentFlow.Mode.SYNC, PipelineSettings.mode(Settings.of(Map.of())));
    assertEquals(DocumentFlow.Mode.BATCH, PipelineSettings.mode(Settings.of(Map.of("ANALYSIS_MODE", "Batch"))));
  }

  @Test
  void clients_areBuiltOnFirstUseOnly() {
    Clients clients = clients(Map.of("GEMINI_API_KEY", "k", "GOOGLE_CLOUD_PROJECT", "p",
        "STORAGE_EMULATOR_HOST", "127.0.0.1:1"));
    assertFalse(clients.gemini.isBuilt());
    assertFalse(clients.storage.isBuilt());
    clients.storage.get();
    assertTrue(clients.storage.isBuilt());
    assertFalse(clients.gemini.isBuilt(), "building one client builds no other");
  }

  private static void assertMissing(String variable, Function<Clients, Object> function) {
    Map<String, String> env = deployed();
    env.remove(variable);
    MissingSetting e = assertThrows(MissingSetting.class, () -> function.apply(clients(env)), variable);
    assertTrue(e.getMessage().startsWith(variable), e.getMessage());
  }

  private static void assertInvalid(String variable, String value, Function<Clients, Object> function) {
    Map<String, String> env = deployed();
    env.put(variable, value);
    InvalidSetting e = assertThrows(InvalidSetting.class, () -> function.apply(clients(env)), variable);
    assertTrue(e.getMessage().startsWith(variable), e.getMessage());
    assertTrue(variable.matches("GEMINI_WEBHOOK_SECRET|NOTIFY_SIGNING_SECRET|RESULTS_SIGNING_KEY")
        || e.getMessage().contains(value), e.getMessage());
  }
}
