package dev.once.cli.models;

import com.google.genai.Client;
import com.google.genai.errors.ApiException;
import com.google.genai.types.Model;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.GeminiConnection;
import dev.once.gemini.GeminiModel;
import dev.once.gemini.GeminiModels;
import dev.once.gemini.GeminiSetting;
import dev.once.gemini.ModelWatch;
import dev.once.gemini.PriceTable;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code once models [MODEL]}: before deploying, is the model served, and what will it be billed? Asks Google
 * ({@code models.get}, then a free {@code countTokens}: Google lists models it refuses to call, such as a model closed to
 * new projects), and prints the built-in catalog's lifecycle of the model and the price this deployment bills today, with
 * its next change. Warns of a model not served, shut down or closing within 90 days, routed to another, or without a
 * price. {@code --catalog} lists every model the catalog knows, offline.
 */
@Command(name = "models", mixinStandardHelpOptions = true,
    description = {"Is MODEL (default: GEMINI_MODEL, else the built-in default) served, and what is it billed? Asks the"
        + " Gemini API (models.get and a free countTokens; GEMINI_API_KEY, GEMINI_BASE_URL for a stand-in), then prints"
        + " the built-in catalog's lifecycle, the price billed today (with GEMINI_PRICES) and its next change, the"
        + " thinking level sent. Warns when the model is not served, shuts down within 90 days, is answered by another,"
        + " or has no price.",
        "--catalog: every model of the built-in catalog, its stage and price today; asks nothing."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:served and priced, nothing to warn of", "1:a warning (listed)",
        "3:the Gemini API failed or did not answer in time", "64:usage error (GEMINI_API_KEY missing, a bad price)"})
public final class ModelsCommand implements Callable<Integer> {
  private final Context context;

  public ModelsCommand(Context context) {
    this.context = context;
  }

  @Parameters(arity = "0..1", paramLabel = "MODEL", description = "the model to ask about (default: GEMINI_MODEL)")
  private String model;

  @Option(names = "--catalog", description = "list the built-in catalog, without asking Google")
  private boolean catalog;

  @Option(names = "--timeout", paramLabel = "SPAN", defaultValue = "30s",
      description = "bound on each call (default ${DEFAULT-VALUE})")
  private Duration timeout;

  @Override
  public Integer call() {
    PrintWriter out = context.out();
    PriceTable prices = prices(context);
    Instant now = Instant.now();
    GeminiModels known = GeminiModels.builtIn();
    LocalDate today = known.billingDay(now);
    if (catalog) {
      out.println(
          "the built-in catalog (read " + known.readOn() + "; default " + known.defaultModel() + "), on " + today
              + " (Pacific Time, Google's billing day):");
      for (GeminiModel entry : known.all()) {
        out.println("  " + entry.name() + "  " + entry.stage(today).name().toLowerCase(Locale.ROOT)
            .replace('_', ' ') + "  " + price(prices, entry.name(), today));
      }
      return Exit.OK;
    }
    String name = model != null ? model.strip()
        : context.settings().optional(GeminiSetting.GEMINI_MODEL).orElse(known.defaultModel());
    List<String> warnings = new ArrayList<>();
    out.println("model " + name);
    askGoogle(context, name, out, warnings);

    Optional<GeminiModel> entry = known.find(name);
    if (entry.isEmpty()) {
      out.println("  catalog: not in the built-in catalog (read " + known.readOn() + ")");
      warnings.add("not in the catalog: its input limit is unknown, so every spending reservation counts its tokens");
    } else {
      GeminiModel catalogued = entry.get();
      out.println("  catalog: " + catalogued.describe(today) + " (read " + known.readOn() + ")");
      switch (catalogued.stage(today)) {
        case SHUT_DOWN -> warnings.add("shut down: a function configured with it refuses to start");
        case CLOSED_TO_NEW_PROJECTS -> warnings.add("closed to new projects: a project that never used it gets 404");
        case ROUTED -> warnings.add("answered by " + catalogued.routedTo() + " and billed at its prices");
        case SHUTDOWN_ANNOUNCED -> {
          if (!today.plus(ModelWatch.SHUTDOWN_WARNING).isBefore(catalogued.shutdown())) {
            warnings.add("shuts down on " + catalogued.shutdown() + ", within 90 days");
          }
        }
        case SERVED -> {}
      }
      out.println("  sends: thinking level " + (catalogued.thinkingLevel() == null ? "none (the model's own)"
          : catalogued.thinkingLevel()) + ", PDFs at medium resolution, no sampling parameters");
    }
    String billed = price(prices, name, today);
    out.println("  billed today (" + today + "): " + billed);
    if (prices.schedule(name).isEmpty()) {
      warnings.add("no price: its bills record no cost, and GEMINI_DAILY_BUDGET_USD refuses to start; add it to"
          + " GEMINI_PRICES");
    }
    if (warnings.isEmpty()) {
      out.println("nothing to warn of");
      return Exit.OK;
    }
    warnings.forEach(warning -> out.println("warning: " + warning));
    return Exit.NOTHING;
  }

  /** models.get, then a free countTokens: listed is not callable (a model closed to new projects is listed). */
  private void askGoogle(Context context, String name, PrintWriter out, List<String> warnings) {
    try (Client client = GeminiConnection.open(context, timeout, null, "once models")) {
      try {
        Model resource = client.models.get(name, null);
        out.println("  Google: listed as " + resource.displayName().orElse(name) + ", version "
            + resource.version().orElse("?") + ", input " + resource.inputTokenLimit().map(String::valueOf).orElse("?")
            + " tokens, output " + resource.outputTokenLimit().map(String::valueOf).orElse("?"));
      } catch (ApiException e) {
        if (e.code() != 404) {
          throw e;
        }
        out.println("  Google: not listed (404: " + Failure.reason(e) + ")");
      }
      try {
        client.models.countTokens(name, "ping", null);
        out.println("  Google: served (a free countTokens answered)");
      } catch (ApiException e) {
        if (e.code() != 404) {
          throw e;
        }
        out.println("  Google: NOT served (countTokens answered 404: " + Failure.reason(e) + ")");
        warnings.add("Google does not serve it to this project: no document would be analysed");
      }
    } catch (Failure e) {
      throw e;
    } catch (RuntimeException e) {
      throw Failure.remote("the Gemini API failed: " + Failure.reason(e), e);
    }
  }

  private static PriceTable prices(Context context) {
    try {
      return PriceTable.fromSettings(context.settings());
    } catch (IllegalStateException e) {
      throw Failure.usage(e.getMessage());
    }
  }

  /** "$0.30 in / $2.50 out per million tokens (batch half); from 2027-01-01: $1.50 / $7.50", or "no price". */
  static String price(PriceTable prices, String model, LocalDate today) {
    Optional<PriceTable.Price> now = prices.priceOn(model, today);
    if (now.isEmpty()) {
      return "no price";
    }
    StringBuilder text = new StringBuilder(usd(now.get()) + " per million tokens (batch half)");
    prices.schedule(model).orElseThrow().stream().filter(step -> step.from().isAfter(today)).findFirst()
        .ifPresent(next -> text.append("; from ").append(next.from()).append(": ").append(usd(next.price())));
    return text.toString();
  }

  private static String usd(PriceTable.Price price) {
    String text = String.format(Locale.ROOT, "$%.3f in / $%.3f out", price.input(), price.output());
    if (price.longInput() != price.input() || price.longOutput() != price.output()) {
      text += String.format(Locale.ROOT, " ($%.2f / $%.2f over 200k prompt tokens)", price.longInput(),
          price.longOutput());
    }
    return text;
  }
}
