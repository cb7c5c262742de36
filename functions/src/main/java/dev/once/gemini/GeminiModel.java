package dev.once.gemini;

import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

/**
 * One model of the built-in catalog ({@link GeminiModels}): its lifecycle as Google dated it, what a request for it
 * sends, and its list prices by the day each took effect.
 *
 * @param closedToNewProjects since when a project that never used it gets 404 "no longer available to new users"
 * @param routedTo the model Google answers it with (deprecated, "automatically routed"), billed at that model's prices
 * @param shutdown when Google turns it off (announced, or passed)
 * @param thinkingLevel the {@code thinkingConfig.thinkingLevel} every request sends; null: none is sent
 * @param prices oldest first, each in force from its day until the next
 */
public record GeminiModel(String name, LocalDate released, LocalDate closedToNewProjects, String routedTo,
    LocalDate routedSince, LocalDate shutdown, String replacement, long inputTokenLimit, long outputTokenLimit,
    String thinkingLevel, List<PriceTable.Step> prices) {

  public GeminiModel {
    prices = List.copyOf(prices);
  }

  /** Where a model stands on a day, worst first. */
  public enum Stage {
    /** Turned off: every call is refused (404). */
    SHUT_DOWN,
    /** A project that never used it is refused (404 "no longer available to new users"). */
    CLOSED_TO_NEW_PROJECTS,
    /** Answered by another model, billed at that model's prices. */
    ROUTED,
    /** Served, with a shutdown date announced. */
    SHUTDOWN_ANNOUNCED,
    SERVED
  }

  public Stage stage(LocalDate day) {
    if (shutdown != null && !day.isBefore(shutdown)) {
      return Stage.SHUT_DOWN;
    }
    if (closedToNewProjects != null && !day.isBefore(closedToNewProjects)) {
      return Stage.CLOSED_TO_NEW_PROJECTS;
    }
    if (routedTo != null && (routedSince == null || !day.isBefore(routedSince))) {
      return Stage.ROUTED;
    }
    return shutdown != null ? Stage.SHUTDOWN_ANNOUNCED : Stage.SERVED;
  }

  /** What an operator reads about the model on {@code day}: its stage, the dates and what to move to. */
  public String describe(LocalDate day) {
    String instead = replacement == null ? "" : "; Google's replacement: " + replacement;
    return switch (stage(day)) {
      case SHUT_DOWN -> name + " was shut down by Google on " + shutdown + instead;
      case CLOSED_TO_NEW_PROJECTS -> name + " is closed to new projects since " + closedToNewProjects
          + " (a project that never used it gets 404 \"no longer available to new users\")" + instead;
      case ROUTED -> name + " is deprecated: Google answers it with " + routedTo
          + (routedSince == null ? "" : " since " + routedSince) + ", billed at that model's prices; use " + routedTo;
      case SHUTDOWN_ANNOUNCED -> name + " is served until Google shuts it down on " + shutdown + instead;
      case SERVED -> name + " is served (released " + released + ", no shutdown announced)";
    };
  }

  public Optional<LocalDate> shutdownDate() {
    return Optional.ofNullable(shutdown);
  }
}
