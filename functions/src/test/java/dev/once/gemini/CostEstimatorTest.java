package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import dev.once.config.Settings;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.samples.InvoicePdf;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The estimate against the stand-in (the SDK's real countTokens and generateContent), and the bound's arithmetic. */
class CostEstimatorTest {
  private static final String MODEL = "gemini-2.5-flash";
  private static final PriceTable PRICES = PriceTable.fromSettings(Settings.of(Map.of()));
  private static GeminiStandIn gemini;
  private static Client client;

  @BeforeAll
  static void start() {
    gemini = GeminiStandIn.start();
    client = StandInClient.of(gemini);
  }

  @AfterAll
  static void stop() {
    client.close();
    gemini.close();
  }

  @Test
  void theEstimate_boundsTheBillOfTheSameCall_withOneFreeCountTokensCall() {
    CostEstimator estimator = new CostEstimator(client, MODEL, PRICES);
    for (byte[] document : new byte[][] {InvoicePdf.of("E-1"), new byte[300_000]}) {
      long countsBefore = gemini.count("countTokens");
      long estimate = estimator.microUsd(document, "application/pdf", false);
      Analysis analysis = new InvoiceAnalyzer(client, MODEL).analyse(document, "application/pdf");
      long bill = PRICES.costMicroUsd(analysis.model(), analysis.usage(), false).orElseThrow();

      assertEquals(countsBefore + 1, gemini.count("countTokens"));
      assertTrue(bill <= estimate, "bill " + bill + " ≤ estimate " + estimate);
      assertEquals(CostEstimator.bound(PRICES, MODEL, analysis.usage().promptTokens() + CostEstimator.SCHEMA_TOKEN_BOUND,
          false), estimate, "the prompt counted exactly as billed, plus the schema's bound");
      assertEquals(estimate / 2, estimator.microUsd(document, "application/pdf", true), 1, "batch: half price");
    }
  }

  @Test
  void theBound_isTheMostAnAnswerMayUse_atTheModelsTier() {
    long flash = CostEstimator.bound(PRICES, MODEL, 1_000, false);
    assertEquals(Math.round(1_000 * 0.30 + InvoicePrompt.MAX_OUTPUT_TOKENS * 2.50), flash);
    long proLong = CostEstimator.bound(PRICES, "gemini-2.5-pro", 250_000, false);
    assertEquals(Math.round(250_000 * 2.50 + InvoicePrompt.MAX_OUTPUT_TOKENS * 15.0), proLong,
        "a prompt over 200k tokens: the whole request at the long-context rates");
    assertTrue(CostEstimator.SCHEMA_TOKEN_BOUND > 100 && CostEstimator.SCHEMA_TOKEN_BOUND < 10_000,
        "the schema's size: " + CostEstimator.SCHEMA_TOKEN_BOUND);
  }

  @Test
  void theCeiling_isAWholeInputWindowAndTheLongestAnswer_withoutACall_andOnlyForModelsWhoseWindowIsKnown() {
    long counts = gemini.count("countTokens");
    long ceiling = new CostEstimator(client, MODEL, PRICES).ceiling(false).orElseThrow();
    assertEquals(CostEstimator.bound(PRICES, MODEL, 1_048_576 + CostEstimator.SCHEMA_TOKEN_BOUND, false), ceiling);
    assertTrue(ceiling > new CostEstimator(client, MODEL, PRICES).microUsd(new byte[300_000], "application/pdf", false),
        "looser than any counted estimate");
    assertEquals(ceiling / 2, new CostEstimator(client, MODEL, PRICES).ceiling(true).orElseThrow(), 1);
    assertTrue(new CostEstimator(client, "gemini-3-pro", PRICES).ceiling(false).isEmpty(), "a window not assumed");
    assertTrue(new CostEstimator(client, "gemini-2.0-pro-exp-02-05", PRICES).ceiling(false).isEmpty(),
        "nor for a model of the same family whose window is larger");
    assertEquals(counts + 1, gemini.count("countTokens"), "only the counted estimate called Gemini");
  }
}
