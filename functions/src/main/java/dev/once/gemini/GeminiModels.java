package dev.once.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The built-in catalog of Gemini models ({@code models.json} beside this class): Google's dates and list prices as
 * read on {@link #readOn()}, with their sources. Models turn over every few months; what changes on a date is an
 * entry there, not a constant in code. A model Google names differently in an answer ({@code modelVersion}:
 * {@code models/gemini-3.8-flash}, {@code gemini-3.8-flash-001}, {@code gemini-3.8-flash-latest}) is found by its
 * longest known name.
 */
public final class GeminiModels {
  private static final String RESOURCE = "models.json";
  private static final GeminiModels BUILT_IN = load();

  private final LocalDate readOn;
  private final ZoneId priceDayZone;
  private final String defaultModel;
  private final Map<String, GeminiModel> models;

  private GeminiModels(LocalDate readOn, ZoneId priceDayZone, String defaultModel, Map<String, GeminiModel> models) {
    this.readOn = readOn;
    this.priceDayZone = priceDayZone;
    this.defaultModel = defaultModel;
    this.models = Map.copyOf(models);
  }

  public static GeminiModels builtIn() {
    return BUILT_IN;
  }

  /** The model a deployment uses when GEMINI_MODEL is not set: one Google serves now and recommends. */
  public String defaultModel() {
    return defaultModel;
  }

  /** When the catalog's facts were read from Google's pages. */
  public LocalDate readOn() {
    return readOn;
  }

  /** The day a call is billed on: Google's billing days begin at midnight Pacific Time. */
  public LocalDate billingDay(Instant at) {
    return LocalDate.ofInstant(at, priceDayZone);
  }

  public List<GeminiModel> all() {
    return models.values().stream().sorted(Comparator.comparing(GeminiModel::name)).toList();
  }

  /** The model a name or an answer's {@code modelVersion} is, by its longest known name; empty when unknown. */
  public Optional<GeminiModel> find(String nameOrVersion) {
    return longestKnown(nameOrVersion, models.keySet()).map(models::get);
  }

  /** {@code models/x-001} → the longest of {@code names} it is, or starts with followed by '-'. */
  static Optional<String> longestKnown(String nameOrVersion, Collection<String> names) {
    if (nameOrVersion == null) {
      return Optional.empty();
    }
    String name = bare(nameOrVersion);
    return names.stream()
        .filter(known -> name.equals(known) || name.startsWith(known + "-"))
        .max(Comparator.comparingInt(String::length));
  }

  /** A model's name without the {@code models/} of its resource name, blanks and case. */
  public static String bare(String model) {
    String name = model.strip().toLowerCase(Locale.ROOT);
    return name.startsWith("models/") ? name.substring("models/".length()) : name;
  }

  private static GeminiModels load() {
    try (InputStream in = GeminiModels.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing beside " + GeminiModels.class.getName());
      }
      return parse(new ObjectMapper().readTree(in));
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + RESOURCE, e);
    }
  }

  static GeminiModels parse(JsonNode root) {
    Map<String, GeminiModel> models = new LinkedHashMap<>();
    for (JsonNode node : root.path("models")) {
      List<PriceTable.Step> prices = new ArrayList<>();
      for (JsonNode price : node.path("prices")) {
        double input = price.path("input").asDouble();
        double output = price.path("output").asDouble();
        prices.add(new PriceTable.Step(LocalDate.parse(price.path("from").asText()), new PriceTable.Price(input, output,
            price.path("longInput").asDouble(input), price.path("longOutput").asDouble(output))));
      }
      prices.sort(Comparator.comparing(PriceTable.Step::from));
      GeminiModel model = new GeminiModel(node.path("name").asText(), date(node, "released"),
          date(node, "closedToNewProjects"), text(node, "routedTo"), date(node, "routedSince"), date(node, "shutdown"),
          text(node, "replacement"), node.path("inputTokenLimit").asLong(0), node.path("outputTokenLimit").asLong(0),
          text(node, "thinkingLevel"), prices);
      models.put(model.name(), model);
    }
    String defaultModel = root.path("defaultModel").asText();
    if (!models.containsKey(defaultModel)) {
      throw new IllegalStateException(RESOURCE + ": the default model " + defaultModel + " is not in the catalog");
    }
    return new GeminiModels(LocalDate.parse(root.path("readOn").asText()),
        ZoneId.of(root.path("priceDayZone").asText()),
        defaultModel, models);
  }

  private static LocalDate date(JsonNode node, String field) {
    String text = text(node, field);
    return text == null ? null : LocalDate.parse(text);
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? null : value.asText();
  }
}
