package dev.once.gemini;

import dev.once.config.MissingSetting;
import dev.once.config.Setting;
import dev.once.config.Settings;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * USD per million tokens by model, for billing entries. Built-in list prices (Gemini API, paid tier, text and
 * image input up to 200k tokens, as published in 2026) can be overridden or extended with GEMINI_PRICES:
 * {@code gemini-2.5-flash=0.30/2.50,my-model=1/4}. Batch jobs cost half, as Google bills them.
 */
public final class PriceTable {
  /** Per million tokens. */
  public record Price(double input, double output) {}

  private static final Map<String, Price> BUILT_IN = Map.of(
      "gemini-2.5-pro", new Price(1.25, 10.00),
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
    settings.optional(Setting.GEMINI_PRICES).ifPresent(text -> prices.putAll(parse(text)));
    return new PriceTable(prices);
  }

  static Map<String, Price> parse(String text) {
    Map<String, Price> parsed = new LinkedHashMap<>();
    for (String entry : text.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      String[] modelAndPrices = entry.strip().split("=", 2);
      String[] inOut = modelAndPrices.length == 2 ? modelAndPrices[1].split("/", 2) : new String[0];
      try {
        if (inOut.length != 2 || modelAndPrices[0].isBlank()) {
          throw new NumberFormatException();
        }
        Price price = new Price(Double.parseDouble(inOut[0].strip()), Double.parseDouble(inOut[1].strip()));
        if (price.input() < 0 || price.output() < 0 || !Double.isFinite(price.input() + price.output())) {
          throw new NumberFormatException();
        }
        parsed.put(modelAndPrices[0].strip(), price);
      } catch (NumberFormatException e) {
        throw new MissingSetting("GEMINI_PRICES entry \"" + entry.strip()
            + "\" is not model=input/output (USD per million tokens), e.g. gemini-2.5-flash=0.30/2.50");
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
      double usd = (usage.promptTokens() * price.input() + usage.outputTokens() * price.output()) / 1_000_000.0;
      return Math.round(usd * 1_000_000.0 * (batch ? 0.5 : 1.0));
    });
  }
}
