package dev.once.gemini;

import dev.once.config.InvalidSetting;
import dev.once.config.Settings;
import dev.once.pipeline.PipelineSetting;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * USD per million tokens by model, for billing entries. Built-in list prices (Gemini API, paid tier, text and
 * image input, as published in 2026) can be overridden or extended with GEMINI_PRICES:
 * {@code gemini-2.5-flash=0.30/2.50,gemini-2.5-pro=1.25/10/2.50/15}. The optional third and fourth figures price a
 * request whose prompt is over 200k tokens, as Google prices its long-context tier: the whole request at those
 * rates. Batch jobs cost half, as Google bills them.
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

  private static final Map<String, Price> BUILT_IN = Map.of(
      "gemini-2.5-pro", new Price(1.25, 10.00, 2.50, 15.00),
      "gemini-2.5-flash", new Price(0.30, 2.50),
      "gemini-2.5-flash-lite", new Price(0.10, 0.40),
      "gemini-2.0-flash", new Price(0.10, 0.40),
      "gemini-2.0-flash-lite", new Price(0.075, 0.30));

  private final Map<String, Price> prices;

  private PriceTable(Map<String, Price> prices) {
    this.prices = Map.copyOf(prices);
  }

  public static PriceTable fromSettings(Settings settings) {
    Map<String, Price> prices = new LinkedHashMap<>(BUILT_IN);
    settings.optional(PipelineSetting.GEMINI_PRICES).ifPresent(text -> prices.putAll(parse(text)));
    return new PriceTable(prices);
  }

  static Map<String, Price> parse(String text) {
    Map<String, Price> parsed = new LinkedHashMap<>();
    for (String entry : text.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      String[] modelAndPrices = entry.strip().split("=", 2);
      String[] rates = modelAndPrices.length == 2 ? modelAndPrices[1].split("/", -1) : new String[0];
      try {
        if ((rates.length != 2 && rates.length != 4) || modelAndPrices[0].isBlank()) {
          throw new NumberFormatException();
        }
        double[] figures = new double[rates.length];
        for (int i = 0; i < rates.length; i++) {
          figures[i] = Double.parseDouble(rates[i].strip());
          if (figures[i] < 0 || !Double.isFinite(figures[i])) {
            throw new NumberFormatException();
          }
        }
        parsed.put(modelAndPrices[0].strip(), rates.length == 2
            ? new Price(figures[0], figures[1])
            : new Price(figures[0], figures[1], figures[2], figures[3]));
      } catch (NumberFormatException e) {
        throw new InvalidSetting(PipelineSetting.GEMINI_PRICES, "entry \"" + entry.strip() + "\" is not model=input/output or"
            + " model=input/output/longInput/longOutput (USD per million tokens), e.g. gemini-2.5-flash=0.30/2.50");
      }
    }
    return parsed;
  }

  /** The price of a model, matched on the longest known prefix ({@code gemini-2.5-flash-001} → flash). */
  public Optional<Price> priceOf(String model) {
    String name = model.startsWith("models/") ? model.substring("models/".length()) : model;
    return prices.entrySet().stream()
        .filter(e -> name.equals(e.getKey()) || name.startsWith(e.getKey() + "-"))
        .max(Comparator.comparingInt(e -> e.getKey().length()))
        .map(Map.Entry::getValue);
  }

  /** Cost in millionths of a USD (exact sums), or empty when the model has no price. */
  public Optional<Long> costMicroUsd(String model, Usage usage, boolean batch) {
    return priceOf(model).map(price -> {
      boolean longContext = usage.promptTokens() > LONG_CONTEXT_TOKENS;
      double input = longContext ? price.longInput() : price.input();
      double output = longContext ? price.longOutput() : price.output();
      double usd = (usage.promptTokens() * input + usage.outputTokens() * output) / 1_000_000.0;
      return Math.round(usd * 1_000_000.0 * (batch ? 0.5 : 1.0));
    });
  }
}
