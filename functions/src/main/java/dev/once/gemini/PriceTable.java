package dev.once.gemini;

import dev.once.config.InvalidSetting;
import dev.once.config.Settings;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * USD per million tokens by model and by day, for bills and reservations: the built-in catalog's list prices
 * ({@link GeminiModels}), each from the day it took effect, overridden or extended by GEMINI_PRICES:
 * {@code gemini-3.8-flash=1.50/7.50@2027-01-01,house-model=1/2}. A model GEMINI_PRICES names is priced by its entries
 * alone (an entry without a date from the start); the optional third and fourth figures price a request whose prompt
 * is over 200k tokens, as Google prices its long-context tier: the whole request at those rates. A call is billed at the
 * price in force on its billing day ({@link GeminiModels#billingDay}); batch jobs cost half, as Google bills them.
 */
public final class PriceTable {
  /** Prompts over this many tokens are priced at the long-context rates, where a model has them. */
  static final long LONG_CONTEXT_TOKENS = 200_000;

  /** Per million tokens; the long-context rates equal the others for a model without that tier. */
  public record Price(double input, double output, double longInput, double longOutput) {
    public Price(double input, double output) {
      this(input, output, input, output);
    }
  }

  /** A price in force from {@code from} (inclusive) until the next step. */
  public record Step(LocalDate from, Price price) {}

  private final GeminiModels catalog;
  private final Map<String, List<Step>> schedules;

  private PriceTable(GeminiModels catalog, Map<String, List<Step>> schedules) {
    this.catalog = catalog;
    this.schedules = Map.copyOf(schedules);
  }

  public static PriceTable builtIn() {
    return fromSettings(Settings.of(Map.of()));
  }

  public static PriceTable fromSettings(Settings settings) {
    GeminiModels catalog = GeminiModels.builtIn();
    Map<String, List<Step>> schedules = new LinkedHashMap<>();
    catalog.all().forEach(model -> schedules.put(model.name(), model.prices()));
    settings.optional(GeminiSetting.GEMINI_PRICES).ifPresent(text -> schedules.putAll(parse(text)));
    return new PriceTable(catalog, schedules);
  }

  static Map<String, List<Step>> parse(String text) {
    Map<String, List<Step>> parsed = new LinkedHashMap<>();
    for (String entry : text.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      String[] modelAndPrices = entry.strip().split("=", 2);
      try {
        if (modelAndPrices.length != 2 || modelAndPrices[0].isBlank()) {
          throw new NumberFormatException();
        }
        String[] ratesAndDay = modelAndPrices[1].split("@", -1);
        if (ratesAndDay.length > 2) {
          throw new NumberFormatException();
        }
        LocalDate from = ratesAndDay.length == 2 ? LocalDate.parse(ratesAndDay[1].strip()) : LocalDate.MIN;
        String[] rates = ratesAndDay[0].split("/", -1);
        if (rates.length != 2 && rates.length != 4) {
          throw new NumberFormatException();
        }
        double[] figures = new double[rates.length];
        for (int i = 0; i < rates.length; i++) {
          figures[i] = Double.parseDouble(rates[i].strip());
          if (figures[i] < 0 || !Double.isFinite(figures[i])) {
            throw new NumberFormatException();
          }
        }
        Price price = rates.length == 2 ? new Price(figures[0], figures[1])
            : new Price(figures[0], figures[1], figures[2], figures[3]);
        List<Step> steps = parsed.computeIfAbsent(GeminiModels.bare(modelAndPrices[0]), m -> new ArrayList<>());
        if (steps.stream().anyMatch(step -> step.from().equals(from))) {
          throw new InvalidSetting(GeminiSetting.GEMINI_PRICES, "prices " + modelAndPrices[0].strip() + " twice from "
              + (from.equals(LocalDate.MIN) ? "the start" : from));
        }
        steps.add(new Step(from, price));
        steps.sort(Comparator.comparing(Step::from));
      } catch (NumberFormatException | DateTimeParseException e) {
        throw new InvalidSetting(GeminiSetting.GEMINI_PRICES, "entry \"" + entry.strip() + "\" is not"
            + " model=input/output or model=input/output/longInput/longOutput (USD per million tokens), optionally"
            + " @YYYY-MM-DD for the day it takes effect, e.g. gemini-3.8-flash=1.50/7.50@2027-01-01");
      }
    }
    return parsed;
  }

  /** The price of a model on a billing day, its name matched on the longest known one; empty when it has none. */
  public Optional<Price> priceOn(String model, LocalDate day) {
    return schedule(model).map(steps -> {
      Price price = steps.get(0).price(); // before its first step (a test's early clock): its first price
      for (Step step : steps) {
        if (!step.from().isAfter(day)) {
          price = step.price();
        }
      }
      return price;
    });
  }

  /** The model's price steps, oldest first; empty when it has no price. */
  public Optional<List<Step>> schedule(String model) {
    return GeminiModels.longestKnown(model, schedules.keySet()).map(schedules::get);
  }

  /** Cost in millionths of a USD (exact sums) of a call answered at {@code at}, or empty when the model has no price. */
  public Optional<Long> costMicroUsd(String model, Usage usage, boolean batch, Instant at) {
    return priceOn(model, catalog.billingDay(at)).map(price -> microUsd(price, usage, batch));
  }

  /**
   * The most a call with {@code usage} can cost if billed any day from {@code from} to {@code from + within}: what a
   * reservation made now must cover, when the price may change before the call is billed (a batch job ends up to 48 h
   * after it is made). Empty when the model has no price.
   */
  public Optional<Long> mostMicroUsd(String model, Usage usage, boolean batch, Instant from, Duration within) {
    LocalDate first = catalog.billingDay(from);
    LocalDate last = catalog.billingDay(from.plus(within));
    return schedule(model).map(steps -> {
      long most = microUsd(priceOn(model, first).orElseThrow(), usage, batch);
      for (Step step : steps) {
        if (step.from().isAfter(first) && !step.from().isAfter(last)) {
          most = Math.max(most, microUsd(step.price(), usage, batch));
        }
      }
      return most;
    });
  }

  private static long microUsd(Price price, Usage usage, boolean batch) {
    boolean longContext = usage.promptTokens() > LONG_CONTEXT_TOKENS;
    double input = longContext ? price.longInput() : price.input();
    double output = longContext ? price.longOutput() : price.output();
    double usd = (usage.promptTokens() * input + usage.outputTokens() * output) / 1_000_000.0;
    return Math.round(usd * 1_000_000.0 * (batch ? 0.5 : 1.0));
  }
}
