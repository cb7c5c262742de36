package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;

/** The catalog as Google dated its models (models.json): what a deployment made today gets, and what changes when. */
class GeminiModelsTest {
  private static final GeminiModels CATALOG = GeminiModels.builtIn();
  private static final LocalDate TODAY = LocalDate.of(2026, 12, 6);

  @Test
  void theDefaultModel_isOneGoogleServesAndRecommendsForNewProjects_withAPriceAndAnInputLimit() {
    GeminiModel model = CATALOG.find(CATALOG.defaultModel()).orElseThrow();
    assertEquals("gemini-3.5-flash-lite", model.name());
    assertEquals(GeminiModel.Stage.SERVED, model.stage(TODAY));
    assertFalse(model.prices().isEmpty());
    assertTrue(model.inputTokenLimit() > 0);
    assertEquals("MINIMAL", model.thinkingLevel());
  }

  @Test
  void eachModel_hasItsStageOnItsDates() {
    assertEquals(GeminiModel.Stage.SHUT_DOWN, stage("gemini-2.0-flash", TODAY));
    assertEquals(GeminiModel.Stage.SHUTDOWN_ANNOUNCED, stage("gemini-2.0-flash", LocalDate.of(2026, 5, 31)));
    assertEquals(GeminiModel.Stage.CLOSED_TO_NEW_PROJECTS, stage("gemini-2.5-flash", TODAY));
    assertEquals(GeminiModel.Stage.SERVED, stage("gemini-2.5-flash", LocalDate.of(2026, 9, 17)));
    assertEquals(GeminiModel.Stage.ROUTED, stage("gemini-3.7-flash", TODAY));
    assertEquals("gemini-3.8-flash", CATALOG.find("gemini-3.7-flash").orElseThrow().routedTo());
    assertEquals(GeminiModel.Stage.ROUTED, stage("gemini-3.5-flash", TODAY));
    assertEquals(GeminiModel.Stage.SHUTDOWN_ANNOUNCED, stage("gemini-3.1-flash-lite", TODAY));
    assertEquals(GeminiModel.Stage.SHUT_DOWN, stage("gemini-3.1-flash-lite", LocalDate.of(2027, 5, 7)));
    assertEquals(GeminiModel.Stage.SERVED, stage("gemini-3.8-flash", TODAY));
    assertTrue(CATALOG.find("gemini-2.0-flash").orElseThrow().describe(TODAY).contains("gemini-3.6-flash"),
        "a shut-down model names its replacement");
  }

  @Test
  void aModelsVersionsAndResourceNames_findIt_longestNameFirst() {
    assertEquals("gemini-3.5-flash-lite", CATALOG.find("models/gemini-3.5-flash-lite").orElseThrow().name());
    assertEquals("gemini-3.5-flash-lite", CATALOG.find(" Gemini-3.5-Flash-Lite-001 ").orElseThrow().name());
    assertEquals("gemini-3.5-flash", CATALOG.find("gemini-3.5-flash-05-2026").orElseThrow().name());
    assertEquals("gemini-3.8-flash", CATALOG.find("gemini-3.8-flash-latest").orElseThrow().name());
    assertTrue(CATALOG.find("gemini-3.8-flashy").isEmpty());
    assertTrue(CATALOG.find("gemini-flash-latest").isEmpty(), "an alias names no model of its own");
  }

  @Test
  void everyModel_isPricedFromItsRelease_andEveryRoutedModelsTargetIsInTheCatalog() {
    for (GeminiModel model : CATALOG.all()) {
      assertFalse(model.prices().isEmpty(), model.name());
      assertFalse(model.prices().get(0).from().isAfter(model.released()), model.name());
      if (model.routedTo() != null) {
        assertTrue(CATALOG.find(model.routedTo()).isPresent(), model.name() + " → " + model.routedTo());
      }
      if (model.replacement() != null) {
        assertTrue(CATALOG.find(model.replacement()).isPresent(), model.name() + " → " + model.replacement());
      }
    }
  }

  @Test
  void aBillingDay_beginsAtMidnightPacificTime() {
    assertEquals(LocalDate.of(2026, 12, 31), CATALOG.billingDay(Instant.parse("2027-01-01T07:59:59Z")));
    assertEquals(LocalDate.of(2027, 1, 1), CATALOG.billingDay(Instant.parse("2027-01-01T08:00:00Z")));
  }

  private static GeminiModel.Stage stage(String model, LocalDate day) {
    return CATALOG.find(model).orElseThrow().stage(day);
  }
}
