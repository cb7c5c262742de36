package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.genai.Client;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.pipeline.RecordWrites;
import dev.once.testing.ManualClock;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A sync call is billed at the price in force on the day it was answered: the analyzer's clock, which the test sets. */
class BillingDayTest {
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
  void aCallOnNewYearsEve_andOneOnNewYearsDay_areEachBilledAtTheirDaysPrice() {
    ModelWatch quiet = new ModelWatch(Log.to(new PrintStream(OutputStream.nullOutputStream())));
    ManualClock clock = new ManualClock(Instant.parse("2026-12-31T20:00:00Z"));
    InvoiceAnalyzer analyzer = new InvoiceAnalyzer(client, "gemini-3.8-flash", quiet, clock);
    // Records price at the analysis's own time: this clock stands still elsewhere, to show it is not the one used.
    RecordWrites records = new RecordWrites(PriceTable.builtIn(), Optional.empty(), new ManualClock(Instant.EPOCH));
    byte[] invoice = InvoicePdf.of("NY-1");

    Analysis eve = analyzer.analyse(invoice, "application/pdf");
    clock.set(Instant.parse("2027-01-01T20:00:00Z"));
    Analysis newYear = analyzer.analyse(invoice, "application/pdf");

    assertEquals(eve.usage(), newYear.usage(), "the same call");
    long prompt = eve.usage().promptTokens();
    long output = eve.usage().outputTokens();
    assertEquals(Math.round(prompt * 0.75 + output * 3.75), records.costMicroUsd(eve, false).orElseThrow());
    assertEquals(Math.round(prompt * 1.50 + output * 7.50), records.costMicroUsd(newYear, false).orElseThrow());
    assertEquals(Math.round((prompt * 1.50 + output * 7.50) * 0.5), records.costMicroUsd(newYear, true).orElseThrow());
  }
}
