package dev.once.gemini;

import dev.once.config.InvalidSetting;
import dev.once.observe.Log;
import java.time.LocalDate;
import java.time.Period;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this instance sees of Google moving its models: an answer from another model than the one asked for (a
 * deprecated model routed to its successor), and a model Google no longer serves. Each is said once per instance, in
 * the log line the metrics and alerts of terraform/observability.tf count, however many documents meet it: the
 * documents themselves are billed as answered, or wait (redelivered) until GEMINI_MODEL is fixed.
 */
public final class ModelWatch {
  /** The WARNING line of a reroute: {@code requested}, {@code answered}. */
  public static final String REROUTED = "gemini model rerouted";
  /** The ERROR line of a model Google refuses as unknown or retired: {@code model}, {@code error}. */
  public static final String UNAVAILABLE = "gemini model unavailable";

  private final Log log;
  private final Set<String> said = ConcurrentHashMap.newKeySet();

  public ModelWatch(Log log) {
    this.log = log;
  }

  /** Where this watch writes: the lines of the batch jobs it watches go there too. */
  Log log() {
    return log;
  }

  /** The WARNING line of a configured model Google has dated: closed to new projects, routed, or shutting down. */
  public static final String LIFECYCLE = "gemini model lifecycle";
  /** A shutdown this close is warned of at start. */
  public static final Period SHUTDOWN_WARNING = Period.ofDays(90);

  /**
   * Checks the configured model against the catalog when a function starts ({@code today}: the instance's date): one
   * Google shut down fails the start, naming its replacement; one closed to new projects, routed to another, shutting
   * down within {@link #SHUTDOWN_WARNING}, or unknown to the catalog is said once, as a warning.
   */
  public void check(String model, LocalDate today) {
    Optional<GeminiModel> known = GeminiModels.builtIn().find(model);
    if (known.isEmpty()) {
      warnOnce(model, model + " is not in the built-in catalog (read " + GeminiModels.builtIn().readOn()
          + "): it is billed only if GEMINI_PRICES prices it, and every spending reservation counts its tokens first");
      return;
    }
    GeminiModel catalogued = known.get();
    GeminiModel.Stage stage = catalogued.stage(today);
    if (stage == GeminiModel.Stage.SHUT_DOWN) {
      throw new InvalidSetting(GeminiSetting.GEMINI_MODEL, "is " + model + ", which Google shut down on "
          + catalogued.shutdown() + ": set it to " + (catalogued.replacement() == null ? "a model Google serves"
              : catalogued.replacement() + ", Google's replacement, or another model Google serves")
          + " (once models lists them); uploads wait meanwhile, none is lost");
    }
    boolean soon = stage == GeminiModel.Stage.SHUTDOWN_ANNOUNCED
        && !today.plus(SHUTDOWN_WARNING).isBefore(catalogued.shutdown());
    if (stage == GeminiModel.Stage.CLOSED_TO_NEW_PROJECTS || stage == GeminiModel.Stage.ROUTED || soon) {
      warnOnce(model, catalogued.describe(today));
    }
  }

  private void warnOnce(String model, String lifecycle) {
    if (said.add("lifecycle " + model)) {
      log.write("WARNING", LIFECYCLE, Map.of("model", model, "lifecycle", lifecycle));
    }
  }

  /** Says once per pair that Google answered {@code analysis}'s request with another model. */
  public void answered(Analysis analysis) {
    if (analysis.rerouted() && said.add("rerouted " + analysis.requestedModel() + " " + analysis.model())) {
      log.write("WARNING", REROUTED, Map.of("requested", analysis.requestedModel(), "answered", analysis.model(),
          "action",
          "billed at " + analysis.model() + "'s prices; set GEMINI_MODEL=" + GeminiModels.bare(analysis.model())
              + " (once models)"));
    }
  }

  /**
   * What a failed call on {@code model} throws: Google's refusal of the model (404) as {@link ModelUnavailable}, said
   * once per model as an ERROR line; any other failure as it came.
   */
  public RuntimeException failed(String model, RuntimeException error) {
    if (!GeminiErrors.modelUnavailable(error)) {
      return error;
    }
    if (said.add("unavailable " + model)) {
      log.error(UNAVAILABLE, Map.of("model", model, "error", GeminiErrors.describe(error),
          "action", "no document is failed or billed for it: they wait, redelivered, until GEMINI_MODEL names a model"
              + " Google serves (once models), then each is analysed once"));
    }
    return new ModelUnavailable(model, error);
  }
}
