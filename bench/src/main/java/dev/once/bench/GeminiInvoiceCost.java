package dev.once.bench;

import com.google.genai.Client;
import dev.once.config.Settings;
import dev.once.gemini.Analysis;
import dev.once.gemini.GeminiClients;
import dev.once.gemini.GeminiModel;
import dev.once.gemini.GeminiModels;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.gemini.ModelWatch;
import dev.once.gemini.PriceTable;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.Map;

/**
 * What Gemini bills for one one-page invoice, on each model of the catalog a new project can call, standard and batch,
 * today and after the next dated price change: the sample invoice analysed through the functions' own analyzer (the
 * request as sent: medium resolution, the thinking level the catalog gives the model) against the Gemini stand-in,
 * priced by the built-in catalog. The stand-in counts as Gemini 3 does (560 tokens a page, thinking as output) but
 * leaves the response schema out of the prompt and writes its own answer: real invoices add the schema's ~300 tokens
 * and a longer answer; the ratios between models hold.
 */
final class GeminiInvoiceCost {
  private GeminiInvoiceCost() {}

  /** @param env the functions' environment: its Gemini stand-in and key */
  static void print(Map<String, String> env) {
    PriceTable prices = PriceTable.builtIn();
    GeminiModels catalog = GeminiModels.builtIn();
    Instant now = Instant.now();
    LocalDate today = catalog.billingDay(now);
    Instant nextYear = Instant.parse("2027-01-01T20:00:00Z");
    ModelWatch quiet = new ModelWatch(Log.to(new PrintStream(OutputStream.nullOutputStream())));
    byte[] invoice = InvoicePdf.of("G-1");
    System.out.printf("%nGemini's bill for a one-page invoice (micro-USD), each model a new project can call today"
        + " (%s), as the stand-in counts it%n", today);
    System.out.printf("%-40s %7s %7s %9s %9s %9s   %s%n", "model", "prompt", "output", "thinking", "standard",
        "batch", "standard / batch at 2027-01-01 prices");
    try (Client client = GeminiClients.create(Settings.of(env))) {
      for (GeminiModel model : catalog.all()) {
        switch (model.stage(today)) {
          case CLOSED_TO_NEW_PROJECTS, SHUT_DOWN -> {
            continue;
          }
          default -> {}
        }
        Analysis analysis = new InvoiceAnalyzer(client, model.name(), quiet, InstantSource.system())
            .analyse(invoice, "application/pdf");
        long standard = prices.costMicroUsd(analysis.model(), analysis.usage(), false, now).orElse(-1L);
        long batch = prices.costMicroUsd(analysis.model(), analysis.usage(), true, now).orElse(-1L);
        long standardLater = prices.costMicroUsd(analysis.model(), analysis.usage(), false, nextYear).orElse(-1L);
        long batchLater = prices.costMicroUsd(analysis.model(), analysis.usage(), true, nextYear).orElse(-1L);
        String name = model.name() + (model.name().equals(catalog.defaultModel()) ? " *" : "")
            + (analysis.rerouted() ? " → " + analysis.model() : "");
        System.out.printf("%-40s %7d %7d %9d %9d %9d   %d / %d%n", name, analysis.usage().promptTokens(),
            analysis.usage().outputTokens(), analysis.usage().thoughtsTokens(), standard, batch, standardLater,
            batchLater);
      }
    }
    System.out.println("* the default (GEMINI_MODEL unset); → the model Google answers it with, whose prices bill it");
  }
}
