package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.InvalidSetting;
import dev.once.config.Settings;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PriceTableTest {
  private static final Usage MILLION_EACH = new Usage(1_000_000, 1_000_000, 2_000_000);
  /** Noon in Mountain View on a day of December 2026, and on New Year's Day. */
  private static final Instant DECEMBER = Instant.parse("2026-12-06T20:00:00Z");
  private static final Instant NEW_YEAR = Instant.parse("2027-01-01T20:00:00Z");
  private final PriceTable builtIn = PriceTable.builtIn();

  @Test
  void costIsTokensTimesPricePerMillion_inMicroUsd_batchAtHalf() {
    // 1M input at 0.30 + 1M output at 2.50 = 2.80 USD
    assertEquals(Optional.of(2_800_000L), builtIn.costMicroUsd("gemini-3.5-flash-lite", MILLION_EACH, false, DECEMBER));
    assertEquals(Optional.of(1_400_000L), builtIn.costMicroUsd("gemini-3.5-flash-lite", MILLION_EACH, true, DECEMBER),
        "batch jobs cost half");
  }

  @Test
  void aPriceChangesOnItsDay_inGooglesBillingDay_whichBeginsAtMidnightPacificTime() {
    // 3.8 Flash: 0.75/3.75 until 2026-12-31, 1.50/7.50 from 2027-01-01
    assertEquals(Optional.of(4_500_000L), builtIn.costMicroUsd("gemini-3.8-flash", MILLION_EACH, false, DECEMBER));
    assertEquals(Optional.of(9_000_000L), builtIn.costMicroUsd("gemini-3.8-flash", MILLION_EACH, false, NEW_YEAR));
    assertEquals(Optional.of(4_500_000L), builtIn.costMicroUsd("gemini-3.8-flash", MILLION_EACH, false,
        Instant.parse("2027-01-01T07:59:59Z")), "still 2026-12-31 in Mountain View");
    assertEquals(Optional.of(9_000_000L), builtIn.costMicroUsd("gemini-3.8-flash", MILLION_EACH, false,
        Instant.parse("2027-01-01T08:00:00Z")), "midnight Pacific Time");
    assertEquals(Optional.of(1_500_000L), builtIn.costMicroUsd("gemini-3.6-flash", new Usage(0, 200_000, 0), false,
        NEW_YEAR), "3.6 Flash rises the same day");
  }

  @Test
  void aReservation_paysTheHighestPriceOfTheDaysTheCallMayBeBilledOn() {
    Instant eve = Instant.parse("2026-12-30T20:00:00Z");
    assertEquals(Optional.of(4_500_000L), builtIn.mostMicroUsd("gemini-3.8-flash", MILLION_EACH, false, eve,
        Duration.ofHours(12)), "the increase is not within half a day");
    assertEquals(Optional.of(9_000_000L), builtIn.mostMicroUsd("gemini-3.8-flash", MILLION_EACH, false, eve,
        Duration.ofDays(3)), "a batch job made on the 30th may end in January");
    assertEquals(Optional.of(9_000_000L), builtIn.mostMicroUsd("gemini-3.8-flash", MILLION_EACH, false, NEW_YEAR,
        Duration.ofDays(3)));
    assertTrue(builtIn.mostMicroUsd("house-model", MILLION_EACH, false, eve, Duration.ofDays(3)).isEmpty());
  }

  @Test
  void aPromptOver200kTokens_pricesTheWholeRequestAtTheLongContextRates_whereTheModelHasThem() {
    // gemini-3.1-pro-preview: 2/12 up to 200k prompt tokens, 4/18 above (for output tokens too)
    assertEquals(Optional.of(400_000L + 1_200_000L),
        builtIn.costMicroUsd("gemini-3.1-pro-preview", new Usage(200_000, 100_000, 300_000), false, DECEMBER),
        "200k is not over");
    assertEquals(Optional.of(840_000L + 1_800_000L),
        builtIn.costMicroUsd("gemini-3.1-pro-preview", new Usage(210_000, 100_000, 310_000), false, DECEMBER),
        "210k is");
    assertEquals(Optional.of((840_000L + 1_800_000L) / 2),
        builtIn.costMicroUsd("gemini-3.1-pro-preview", new Usage(210_000, 100_000, 310_000), true, DECEMBER),
        "and batch halves it");
    assertEquals(Optional.of(63_000L + 250_000L),
        builtIn.costMicroUsd("gemini-3.5-flash-lite", new Usage(210_000, 100_000, 310_000), false, DECEMBER),
        "flash-lite has no tier");
  }

  @Test
  void answeringModelsVersionsAndResourceNames_arePricedAsTheirModel_longestNameFirst() {
    LocalDate day = LocalDate.of(2026, 12, 6);
    assertEquals(builtIn.priceOn("gemini-3.5-flash-lite", day),
        builtIn.priceOn("models/gemini-3.5-flash-lite-001", day));
    assertEquals(builtIn.priceOn("gemini-3.8-flash", day), builtIn.priceOn("gemini-3.8-flash-latest", day));
    assertEquals(1.50, builtIn.priceOn("gemini-3.5-flash-09-2026", day).orElseThrow().input(), "3.5 Flash");
    assertEquals(0.30, builtIn.priceOn("gemini-3.5-flash-lite-preview", day).orElseThrow().input(), "not 3.5 Flash");
    assertTrue(builtIn.priceOn("gemini-3.5-flashy", day).isEmpty());
    assertTrue(builtIn.costMicroUsd("mystery-model", new Usage(10, 10, 20), false, DECEMBER).isEmpty());
  }

  @Test
  void theSettingAddsAndOverridesPrices_withTheDayEachTakesEffect() {
    PriceTable table = PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES",
        "gemini-3.5-flash-lite=1/2, house-model = 0.5/0.5, house-model=1/1@2027-01-01")));
    LocalDate day = LocalDate.of(2026, 12, 6);
    assertEquals(new PriceTable.Price(1, 2), table.priceOn("gemini-3.5-flash-lite", day).orElseThrow());
    assertEquals(new PriceTable.Price(0.5, 0.5), table.priceOn("house-model", day).orElseThrow());
    assertEquals(new PriceTable.Price(1, 1), table.priceOn("house-model", LocalDate.of(2027, 1, 1)).orElseThrow());
    assertEquals(new PriceTable.Price(0.75, 3.75), table.priceOn("gemini-3.8-flash", day).orElseThrow(),
        "a model the setting does not name keeps the catalog's prices");
    PriceTable dated = PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", "gemini-3.8-flash=2/8@2027-02-01")));
    assertEquals(new PriceTable.Price(2, 8), dated.priceOn("gemini-3.8-flash", LocalDate.of(2027, 3, 1)).orElseThrow());
    assertEquals(new PriceTable.Price(2, 8), dated.priceOn("gemini-3.8-flash", day).orElseThrow(),
        "a model the setting names is priced by its entries alone: before the first, at the first");
    PriceTable tiered = PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", "house-model=1/2/3/4")));
    assertEquals(new PriceTable.Price(1, 2, 3, 4), tiered.priceOn("house-model", day).orElseThrow());
    // 300k prompt tokens at 3 USD/M + 1k output tokens at 4 USD/M
    assertEquals(Optional.of(900_000L + 4_000L), tiered.costMicroUsd("house-model", new Usage(300_000, 1_000, 0), false,
        DECEMBER));
  }

  @Test
  void malformedPrices_failNamingTheVariable() {
    for (String bad : new String[] {"flash", "flash=1", "flash=a/b", "=1/2", "flash=-1/2", "flash=NaN/1", "flash=1/2/3",
        "flash=1/2/3/4/5", "flash=1/2/3/-4", "flash=1/2//4", "flash=1/2@2027-13-01", "flash=1/2@", "flash=1/2@x@y",
        "flash=1/2,flash=3/4", "flash=1/2@2027-01-01,flash=3/4@2027-01-01"}) {
      InvalidSetting e = assertThrows(InvalidSetting.class,
          () -> PriceTable.fromSettings(Settings.of(Map.of("GEMINI_PRICES", bad))), bad);
      assertTrue(e.getMessage().startsWith("GEMINI_PRICES"), e.getMessage());
    }
  }
}
