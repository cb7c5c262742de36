package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The models the stand-in serves ({@code served-models.json}): which answer, which answer with another model (Google's
 * "automatically routed"), which refuse a project that never used them, which are shut down, each refusal in Google's
 * words; and what {@code models.get} says of each. A test moves a model to another stage as Google does on its dates
 * ({@link #move}).
 */
final class ServedModels {
  private static final String RESOURCE = "served-models.json";

  /** Where a model stands. */
  enum Stage {
    SERVED, ROUTED, CLOSED_TO_NEW_PROJECTS, SHUT_DOWN;

    static Stage parse(String text) {
      try {
        return valueOf(text.strip().toUpperCase(Locale.ROOT).replace('-', '_'));
      } catch (IllegalArgumentException e) {
        throw HttpError.badRequest("invalid", "stage must be served, routed, closed-to-new-projects or shut-down, got "
            + text);
      }
    }
  }

  /**
   * One model.
   *
   * @param generation 3: thinking levels, and a PDF page counted by media resolution; 2: 258 tokens a page
   * @param routedTo the model that answers it when {@code ROUTED}
   * @param suggested the model a refusal of a closed one names
   * @param thinkingLevels those a request may set (another is refused); empty: the model takes none
   */
  record Model(String name, String version, String displayName, int generation, Stage stage, String routedTo,
      String suggested, String defaultThinkingLevel, List<String> thinkingLevels) {
    Model with(Stage newStage, String to) {
      return new Model(name, version, displayName, generation, newStage, to, suggested, defaultThinkingLevel,
          thinkingLevels);
    }
  }

  private final Map<String, Model> models = new ConcurrentHashMap<>();

  private ServedModels() {}

  static ServedModels load() {
    ServedModels served = new ServedModels();
    try (InputStream in = ServedModels.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing beside " + ServedModels.class.getName());
      }
      for (JsonNode node : Json.parseTrusted(new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .path("models")) {
        Stage stage = node.path("shutDown").asBoolean() ? Stage.SHUT_DOWN
            : node.path("closedToNewProjects").asBoolean() ? Stage.CLOSED_TO_NEW_PROJECTS
            : node.hasNonNull("routedTo") ? Stage.ROUTED : Stage.SERVED;
        List<String> levels = new ArrayList<>();
        node.path("thinkingLevels").forEach(level -> levels.add(level.asText()));
        served.models.put(node.path("name").asText(),
            new Model(node.path("name").asText(), node.path("version").asText(),
                node.path("displayName").asText(), node.path("generation").asInt(3), stage,
                node.path("routedTo").asText(null), node.path("suggested").asText(null),
                node.path("defaultThinkingLevel").asText(null), List.copyOf(levels)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + RESOURCE, e);
    }
    return served;
  }

  /**
   * The model that answers a call on {@code models/id} ({@code method}: generateContent, countTokens,
   * batchGenerateContent): the model itself, or the one it is routed to. Throws Google's 404 for a model shut down,
   * closed to this (new) project, or unknown.
   */
  Model answering(String id, String version, String method) {
    Model model = models.get(id);
    if (model == null) {
      throw HttpError.notFound("models/" + id + " is not found for API version " + version
          + ", or is not supported for "
          + method + ". Call ModelService.ListModels to see the list of available models and their supported methods.");
    }
    return switch (model.stage()) {
      case SERVED -> model;
      case ROUTED -> answering(model.routedTo(), version, method);
      case CLOSED_TO_NEW_PROJECTS -> throw HttpError.notFound("This model models/" + id + " is no longer available to"
          + " new users. Please update your code to use models/" + model.suggested()
          + " for the latest features and improvements.");
      case SHUT_DOWN -> throw HttpError.notFound("This model models/" + id + " is no longer available. Please update"
          + " your code to use a newer model for the latest features and improvements.");
    };
  }

  /**
   * What {@code models.get} answers: the model's resource, as for a served model even when it is closed to new projects
   * (Google lists what it refuses to call; the resource has no deprecation field); 404 for one shut down or unknown.
   */
  ObjectNode resource(String id, String version) {
    Model model = models.get(id);
    if (model == null || model.stage() == Stage.SHUT_DOWN) {
      throw HttpError.notFound("Model is not found: models/" + id + " for api version " + version);
    }
    ObjectNode resource = Json.object();
    resource.put("name", "models/" + model.name());
    resource.put("version", model.version());
    resource.put("displayName", model.displayName());
    resource.put("description", model.displayName());
    resource.put("inputTokenLimit", 1_048_576);
    resource.put("outputTokenLimit", model.generation() >= 3 || model.name().startsWith("gemini-2.5") ? 65_536 : 8_192);
    resource.putArray("supportedGenerationMethods").add("generateContent").add("countTokens")
        .add("createCachedContent").add("batchGenerateContent");
    resource.put("temperature", 1);
    resource.put("topP", 0.95);
    resource.put("topK", 64);
    resource.put("maxTemperature", 2);
    resource.put("thinking", model.generation() >= 3 || model.name().startsWith("gemini-2.5"));
    return resource;
  }

  /** Moves a model to another stage ({@code to}: the model that answers a routed one), as Google does on its dates. */
  void move(String id, Stage stage, String to) {
    Model model = models.get(id);
    if (model == null) {
      throw HttpError.notFound("no model " + id + " in the stand-in's catalog");
    }
    if (stage == Stage.ROUTED && (to == null || !models.containsKey(to))) {
      throw HttpError.badRequest("invalid", "a routed model needs to=MODEL, a model of the catalog");
    }
    models.put(id, model.with(stage, stage == Stage.ROUTED ? to : model.routedTo()));
  }
}
