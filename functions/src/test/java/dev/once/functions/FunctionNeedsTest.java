package dev.once.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.Setting;
import dev.once.config.Settings;
import dev.once.pipeline.PipelineSetting;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link FunctionNeeds} is what each function reads: started with those settings alone, and every other pipeline setting set
 * to a value its parser refuses, each function starts (it reads its settings at start, so one read outside its needs
 * would fail it). The webhook's needs hold no Gemini key and no results topic, and its Firestore access is a read.
 */
class FunctionNeedsTest {
  private static final Map<String, Function<Clients, Object>> FUNCTIONS = Map.of(
      DocumentUploaded.class.getName(), DocumentUploaded::new, MessageDelivered.class.getName(), MessageDelivered::new,
      GeminiWebhook.class.getName(), GeminiWebhook::new, BatchCompleted.class.getName(), BatchCompleted::new,
      GeminiReconciler.class.getName(), GeminiReconciler::new);

  /** A value each setting's reader accepts (as Terraform would set it). */
  private static final Map<String, String> VALID = Map.ofEntries(
      Map.entry("GOOGLE_CLOUD_PROJECT", "p"), Map.entry("GEMINI_API_KEY", "k"),
      Map.entry("GEMINI_WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
      Map.entry("NOTIFY_SIGNING_SECRET", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"),
      Map.entry("RESULTS_SIGNING_KEY", TestSignatures.RESULTS_KEY),
      Map.entry("RESULTS_TOPIC", "results"), Map.entry("DEAD_LETTER_TOPIC", "dead"),
      Map.entry("BATCH_COMPLETIONS_TOPIC", "batch-completions"), Map.entry("NOTIFY_URL", "https://example.com/n"),
      Map.entry("GEMINI_DAILY_BUDGET_USD", "25"));

  @Test
  void everyFunction_startsWithItsNeedsAlone_andEveryOtherSettingInvalid() {
    assertEquals(FUNCTIONS.keySet(), FunctionNeeds.all().keySet());
    for (FunctionNeeds.Function needs : FunctionNeeds.all().values()) {
      Map<String, String> env = new HashMap<>();
      for (Setting setting : PipelineSetting.values()) {
        String name = setting.name();
        if (needs.settings().contains(name)) {
          if (VALID.containsKey(name)) {
            env.put(name, VALID.get(name));
          }
        } else if (!name.endsWith("_EMULATOR_HOST") && !name.equals("GEMINI_BASE_URL")) {
          env.put(name, "ftp://not valid");
        }
      }
      VALID.forEach((name, value) -> {
        if (needs.settings().contains(name)) {
          env.put(name, value);
        }
      });
      FUNCTIONS.get(needs.entryPoint()).apply(new Clients(Settings.of(env)));
      assertTrue(needs.settings().containsAll(needs.secrets()), needs.entryPoint());
    }
  }

  @Test
  void thePublicWebhook_needsNoGeminiKeyNoResultsTopic_andOnlyReadsFirestore() {
    FunctionNeeds.Function webhook = FunctionNeeds.all().get(GeminiWebhook.class.getName());
    for (String withheld : Set.of("GEMINI_API_KEY", "RESULTS_TOPIC", "RESULTS_SIGNING_KEY", "NOTIFY_SIGNING_SECRET")) {
      assertFalse(webhook.settings().contains(withheld), withheld);
    }
    assertEquals(FunctionNeeds.Firestore.READ, webhook.firestore());
    assertEquals(Set.of("GEMINI_WEBHOOK_SECRET"), webhook.secrets());
    assertFalse(webhook.readsInbox());
  }
}
