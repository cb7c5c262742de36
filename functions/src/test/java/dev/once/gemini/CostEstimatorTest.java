package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.testing.ManualClock;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The estimate against the stand-in (the SDK's real countTokens and generateContent), on every model of the catalog
 * Google serves, and the bound's arithmetic.
 */
class CostEstimatorTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static final PriceTable PRICES = PriceTable.builtIn();
  private static final Instant NOW = Instant.parse("2026-12-06T20:00:00Z");
  private static final ModelWatch SILENT = new ModelWatch(Log.to(new PrintStream(OutputStream.nullOutputStream())));
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

  private static CostEstimator estimator(String model, Instant now) {
    return new CostEstimator(client, model, PRICES, SILENT, new ManualClock(now));
  }

  /** The catalog's models a new project can call today (not shut down, not closed to new projects). */
  private static List<String> callable() {
    LocalDate today = LocalDate.of(2026, 12, 6);
    return GeminiModels.builtIn().all().stream().filter(model -> switch (model.stage(today)) {
      case SERVED, ROUTED, SHUTDOWN_ANNOUNCED -> true;
      case CLOSED_TO_NEW_PROJECTS, SHUT_DOWN -> false;
    }).map(GeminiModel::name).toList();
  }

  @Test
  void theReservation_boundsTheBill_onEveryModelGoogleServes_atTheThinkingLevelWeSend_andThinkingToTheBound() {
    assertTrue(callable().containsAll(List.of("gemini-3.8-flash", "gemini-3.5-flash-lite", "gemini-3.7-flash")),
        callable().toString());
    for (int forcedThinking : new int[] {0, InvoicePrompt.MAX_OUTPUT_TOKENS * 2}) {
      gemini.thinkingTokens(forcedThinking);
      try {
        for (String model : callable()) {
          for (byte[] document : new byte[][] {InvoicePdf.of("E-1"), new byte[300_000]}) {
            long countsBefore = gemini.count("countTokens");
            long estimate = estimator(model, NOW).microUsd(document, "application/pdf", false);
            Analysis analysis = new InvoiceAnalyzer(client, model, SILENT, new ManualClock(NOW))
                .analyse(document, "application/pdf");
            long bill = PRICES.costMicroUsd(analysis.model(), analysis.usage(), false, NOW).orElseThrow();

            assertEquals(countsBefore + 1, gemini.count("countTokens"));
            assertTrue(bill <= estimate, model + ": bill " + bill + " ≤ estimate " + estimate + " " + analysis.usage());
            assertTrue(bill <= estimator(model, NOW).ceiling(false).orElseThrow(), model + ": and the ceiling");
            assertTrue(analysis.usage().outputTokens() <= InvoicePrompt.MAX_OUTPUT_TOKENS, "thinking within the bound");
            assertEquals(estimate / 2, estimator(model, NOW).microUsd(document, "application/pdf", true), 1,
                "batch: half price");
          }
        }
      } finally {
        gemini.thinkingTokens(0);
      }
    }
  }

  @Test
  void theEstimate_countsThePromptAsBilled_plusTheSchemasBound_atThePagesOfGemini3() {
    byte[] invoice = InvoicePdf.of("E-2");
    long estimate = estimator(MODEL, NOW).microUsd(invoice, "application/pdf", false);
    Analysis analysis =
        new InvoiceAnalyzer(client, MODEL, SILENT, new ManualClock(NOW)).analyse(invoice, "application/pdf");
    assertEquals(estimator(MODEL, NOW).bound(analysis.usage().promptTokens() + CostEstimator.SCHEMA_TOKEN_BOUND, false),
        estimate, "the prompt counted exactly as billed (560 a page at medium), plus the schema's bound");
    assertTrue(analysis.usage().promptTokens() >= 560, "a PDF page is 560 tokens on Gemini 3: " + analysis.usage());
  }

  @Test
  void theBound_isTheMostAnAnswerMayUse_atTheModelsTier_andTheHighestPriceOfTheComingDays() {
    assertEquals(Math.round(1_000 * 0.30 + InvoicePrompt.MAX_OUTPUT_TOKENS * 2.50),
        estimator(MODEL, NOW).bound(1_000, false));
    assertEquals(Math.round(250_000 * 4.00 + InvoicePrompt.MAX_OUTPUT_TOKENS * 18.0),
        estimator("gemini-3.1-pro-preview", NOW).bound(250_000, false),
        "a prompt over 200k tokens: the whole request at the long-context rates");
    assertEquals(Math.round(1_000 * 0.75 + InvoicePrompt.MAX_OUTPUT_TOKENS * 3.75),
        estimator("gemini-3.8-flash", NOW).bound(1_000, false));
    assertEquals(Math.round(1_000 * 1.50 + InvoicePrompt.MAX_OUTPUT_TOKENS * 7.50),
        estimator("gemini-3.8-flash", Instant.parse("2026-12-30T20:00:00Z")).bound(1_000, false),
        "reserved on the 30th, a call may be billed at January's price");
    assertEquals(Math.round(1_000 * 1.50 + InvoicePrompt.MAX_OUTPUT_TOKENS * 9.00),
        estimator("gemini-3.5-flash", NOW).bound(1_000, false),
        "a routed model: the higher of its own prices and those of the model answering it (3.6 Flash)");
    assertTrue(CostEstimator.SCHEMA_TOKEN_BOUND > 100 && CostEstimator.SCHEMA_TOKEN_BOUND < 10_000,
        "the schema's size: " + CostEstimator.SCHEMA_TOKEN_BOUND);
  }

  @Test
  void theCeiling_isAWholeInputWindowAndTheLongestAnswer_withoutACall_forEveryModelOfTheCatalog() {
    long counts = gemini.count("countTokens");
    long ceiling = estimator(MODEL, NOW).ceiling(false).orElseThrow();
    assertEquals(estimator(MODEL, NOW).bound(1_048_576 + CostEstimator.SCHEMA_TOKEN_BOUND, false), ceiling);
    assertTrue(ceiling > estimator(MODEL, NOW).microUsd(new byte[300_000], "application/pdf", false),
        "looser than any counted estimate");
    assertEquals(ceiling / 2, estimator(MODEL, NOW).ceiling(true).orElseThrow(), 1);
    for (GeminiModel model : GeminiModels.builtIn().all()) {
      assertTrue(estimator(model.name(), NOW).ceiling(false).isPresent(), model.name());
    }
    assertFalse(estimator("gemini-4-flash", NOW).ceiling(false).isPresent(), "a window not assumed");
    assertEquals(counts + 1, gemini.count("countTokens"), "only the counted estimate called Gemini");
  }
}
