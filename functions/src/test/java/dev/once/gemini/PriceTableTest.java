package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.InvalidSetting;
import dev.once.config.Settings;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PriceTableTest {
  private final PriceTable builtIn = PriceTable.fromSettings(Settings.of(Map.of()));

  @Test
  void costIsTokensTimesPricePerMillion_inMicroUsd() {
    // 1M input at 0.30 + 1M output at 2.50 = 2.80 USD
    assertEquals(Optional.of(2_800_000L), builtIn.costMicroUsd("gemini-2.5-flash", new Usage(1_000_000, 1_000_000, 2_000_000), false));
    assertEquals(Optional.of(1_400_000L), builtIn.costMicroUsd("gemini-2.5-flash", new Usage(1_000_000, 1_000_000, 2_000_000), true),
        "batch jobs cost half");
  }

  @Test
  void aPromptOver200kTokens_pricesTheWholeRequestAtTheLongContextRates_whereTheModelHasThem() {
    // gemini-2.5-pro: 1.25/10 up to 200k prompt tokens, 2.50/15 above (for output tokens too)
    assertEquals(Optional.of(250_000L + 1_000_000L),
        builtIn.costMicroUsd("gemini-2.5-pro", new Usage(200_000, 100_000, 300_000), false), "200k is not over");
    assertEquals(Optional.of(525_000L + 1_500_000L),
        builtIn.costMicroUsd("gemini-2.5-pro", new Usage(210_000, 100_000, 310_000), false), "210k is");
    assertEquals(Optional.of((525_000L + 1_500_000L) / 2),
        builtIn.costMicroUsd("gemini-2.5-pro", new Usage(210_000, 100_000, 310_000), true), "and batch halves it");
    assertEquals(Optional.of(63_000L + 250_000L),
        builtIn.costMicroUsd("gemini-2.5-flash", new Usage(210_000, 100_000, 310_000), false), "flash has no tier");
  }

  @Test
  void modelVersionsAndResourceNames_matchTheirFamily_longestPrefixFirst() {
    assertEquals(builtIn.priceOf("gemini-2.5-flash"), builtIn.priceOf("models/gemini-2.5-flash-001"));
    assertEquals(0.10, builtIn.priceOf("gemini-2.5-flash-lite-preview").orElseThrow().input());
    assertTrue(builtIn.priceOf("gemini-2.5-flashy").isEmpty());
    assertTrue(builtIn.costMicroUsd("mystery-model", new Usage(10, 10, 20), false).isEmpty());
  }

  @Test
  void settingAddsAndOverridesPrices() {
    PriceTable table = PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", "gemini-2.5-flash=1/2, house-model = 0.5/0.5")));
    assertEquals(new PriceTable.Price(1, 2), table.priceOf("gemini-2.5-flash").orElseThrow());
    assertEquals(new PriceTable.Price(0.5, 0.5), table.priceOf("house-model").orElseThrow());
    PriceTable tiered = PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", "house-model=1/2/3/4")));
    assertEquals(new PriceTable.Price(1, 2, 3, 4), tiered.priceOf("house-model").orElseThrow());
    // 300k prompt tokens at 3 USD/M + 1k output tokens at 4 USD/M
    assertEquals(Optional.of(900_000L + 4_000L), tiered.costMicroUsd("house-model", new Usage(300_000, 1_000, 0), false));
  }

  @Test
  void malformedPrices_failNamingTheVariable() {
    for (String bad : new String[] {"flash", "flash=1", "flash=a/b", "=1/2", "flash=-1/2", "flash=NaN/1", "flash=1/2/3",
        "flash=1/2/3/4/5", "flash=1/2/3/-4", "flash=1/2//4"}) {
      InvalidSetting e = assertThrows(InvalidSetting.class,
          () -> PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", bad))), bad);
      assertTrue(e.getMessage().startsWith("GEMINI_PRICES"), e.getMessage());
    }
  }
}
