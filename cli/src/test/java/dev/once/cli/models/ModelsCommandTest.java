package dev.once.cli.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.gemini.GeminiModels;
import dev.once.local.gemini.GeminiStandIn;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code once models} asks the Gemini stand-in (models.get, countTokens) and reads the built-in catalog. */
class ModelsCommandTest {
  private static GeminiStandIn gemini;

  @BeforeAll
  static void start() {
    gemini = GeminiStandIn.start();
  }

  @AfterAll
  static void stop() {
    gemini.close();
  }

  private static OnceRunner.Result once(Map<String, String> extra, String... args) {
    Map<String, String> env = new HashMap<>(Map.of("GEMINI_API_KEY", "k", "GEMINI_BASE_URL", gemini.baseUrl()));
    env.putAll(extra);
    return OnceRunner.run(env, args);
  }

  @Test
  void theDefaultModel_isServedAndPriced_andThereIsNothingToWarnOf() {
    long asked = gemini.count("models.get");
    OnceRunner.Result result = once(Map.of(), "models");
    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().startsWith("model " + GeminiModels.builtIn().defaultModel() + "\n"), result.all());
    assertTrue(result.out().contains("Google: listed as Gemini 3.5 Flash Lite"), result.all());
    assertTrue(result.out().contains("Google: served (a free countTokens answered)"), result.all());
    assertTrue(result.out().contains("$0.300 in / $2.500 out per million tokens (batch half)"), result.all());
    assertTrue(result.out().contains("thinking level MINIMAL"), result.all());
    assertTrue(result.out().endsWith("nothing to warn of\n"), result.all());
    assertEquals(asked + 1, gemini.count("models.get"));
  }

  @Test
  void gemini25Flash_isListedButNotServedToANewProject_andSaysWhatToUseInstead() {
    OnceRunner.Result result = once(Map.of("GEMINI_MODEL", "gemini-2.5-flash"), "models");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("Google: listed as Gemini 2.5 Flash"), result.all());
    assertTrue(result.out().contains("Google: NOT served (countTokens answered 404: 404 NOT_FOUND. This model"
        + " models/gemini-2.5-flash is no longer available to new users"), result.all());
    assertTrue(result.out().contains("replacement: gemini-3.5-flash-lite"), result.all());
    assertTrue(result.out().contains("warning: Google does not serve it to this project"), result.all());
  }

  @Test
  void aShutDownModel_isNotListed_andWouldNotStart() {
    OnceRunner.Result result = once(Map.of(), "models", "gemini-2.0-flash");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("Google: not listed (404"), result.all());
    assertTrue(result.out().contains("warning: shut down: a function configured with it refuses to start"),
        result.all());
  }

  @Test
  void aRoutedModel_warnsOfTheModelThatAnswers_andAPriceChangeToComeIsShown() {
    OnceRunner.Result result = once(Map.of(), "models", "gemini-3.7-flash");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("warning: answered by gemini-3.8-flash and billed at its prices"), result.all());
    if (GeminiModels.builtIn().billingDay(Instant.now()).isBefore(LocalDate.of(2027, 1, 1))) {
      assertTrue(result.out().contains("; from 2027-01-01: $1.500 in / $7.500 out"), result.all());
    }
  }

  @Test
  void aModelWithoutAPrice_isWarnedOf_andGeminiPricesGivesItOne() {
    OnceRunner.Result unpriced = once(Map.of(), "models", "gemini-3.1-pro-previews");
    assertEquals(Exit.NOTHING, unpriced.status(), unpriced.all());
    assertTrue(unpriced.out().contains("billed today") && unpriced.out().contains(": no price"), unpriced.all());
    assertTrue(unpriced.out().contains("warning: no price"), unpriced.all());
    OnceRunner.Result priced = once(Map.of("GEMINI_PRICES", "gemini-3.8-flash=1/2@2099-01-01,gemini-3.8-flash=0.5/1"),
        "models", "gemini-3.8-flash");
    assertEquals(Exit.OK, priced.status(), priced.all());
    assertTrue(priced.out().contains("$0.500 in / $1.000 out per million tokens (batch half); from 2099-01-01: $1.000"
        + " in / $2.000 out"), priced.all());
    assertEquals(Exit.USAGE, once(Map.of("GEMINI_PRICES", "flash=x"), "models").status());
  }

  @Test
  void theCatalog_isListedWithoutAskingGoogle_andWithoutAKey() {
    long asked = gemini.count("models.get");
    OnceRunner.Result result = OnceRunner.run(Map.of(), "models", "--catalog");
    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("  gemini-2.0-flash  shut down  $0.100 in / $0.400 out"), result.all());
    assertTrue(result.out().contains("  gemini-3.5-flash-lite  served  $0.300 in / $2.500 out"), result.all());
    assertEquals(asked, gemini.count("models.get"));
    assertEquals(Exit.USAGE, OnceRunner.run(Map.of(), "models").status(), "asking Google needs the key");
  }
}
