package dev.once.functions;

import dev.once.pipeline.PipelineSetting;
import dev.once.config.OnceSetting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.MissingSetting;
import dev.once.config.Settings;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WiringTest {
  @Test
  void missingSettings_failAtFirstUse_namingTheVariable() {
    Clients clients = new Clients(Settings.of(Map.of("GOOGLE_CLOUD_PROJECT", "p")));
    MissingSetting topic = assertThrows(MissingSetting.class, () -> clients.topic(PipelineSetting.RESULTS_TOPIC));
    assertTrue(topic.getMessage().startsWith("RESULTS_TOPIC"), topic.getMessage());
    MissingSetting key = assertThrows(MissingSetting.class, clients.gemini::get);
    assertTrue(key.getMessage().startsWith("GEMINI_API_KEY"), key.getMessage());
    MissingSetting bad = assertThrows(MissingSetting.class,
        () -> new Clients(Settings.of(Map.of("ONCE_LEASE_SECONDS", "ten"))).settings.seconds(OnceSetting.ONCE_LEASE_SECONDS));
    assertTrue(bad.getMessage().contains("ONCE_LEASE_SECONDS") && bad.getMessage().contains("ten"), bad.getMessage());
  }

  @Test
  void topicSettings_acceptIdsAndFullNames() {
    Clients clients = new Clients(Settings.of(Map.of("GOOGLE_CLOUD_PROJECT", "p", "RESULTS_TOPIC", "results",
        "DEAD_LETTER_TOPIC", "projects/q/topics/dead")));
    assertEquals("projects/p/topics/results", clients.topic(PipelineSetting.RESULTS_TOPIC));
    assertEquals("projects/q/topics/dead", clients.topic(PipelineSetting.DEAD_LETTER_TOPIC));
    MissingSetting bad = assertThrows(MissingSetting.class,
        () -> new Clients(Settings.of(Map.of("RESULTS_TOPIC", "projects/p/subscriptions/x"))).topic(PipelineSetting.RESULTS_TOPIC));
    assertTrue(bad.getMessage().startsWith("RESULTS_TOPIC"), bad.getMessage());
  }

  @Test
  void analysisMode_isSyncOrBatch() {
    assertEquals(DocumentFlow.Mode.SYNC, DocumentUploaded.mode(Settings.of(Map.of())));
    assertEquals(DocumentFlow.Mode.BATCH, DocumentUploaded.mode(Settings.of(Map.of("ANALYSIS_MODE", "Batch"))));
    MissingSetting bad = assertThrows(MissingSetting.class,
        () -> DocumentUploaded.mode(Settings.of(Map.of("ANALYSIS_MODE", "later"))));
    assertTrue(bad.getMessage().startsWith("ANALYSIS_MODE"), bad.getMessage());
  }

  @Test
  void clients_areBuiltOnFirstUseOnly() {
    Clients clients = new Clients(Settings.of(Map.of("GEMINI_API_KEY", "k", "GOOGLE_CLOUD_PROJECT", "p",
        "STORAGE_EMULATOR_HOST", "127.0.0.1:1")));
    assertFalse(clients.gemini.isBuilt());
    assertFalse(clients.storage.isBuilt());
    clients.storage.get();
    assertTrue(clients.storage.isBuilt());
    assertFalse(clients.gemini.isBuilt(), "building one client builds no other");
  }
}
