package dev.once.functions;

import dev.once.guard.Outcome;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one event came to: the outcome of its deciding effect (the first that did not simply pass), and every
 * effect's label, for the event's log line and the HTTP answers.
 */
record EventReport(String key, String effect, String outcome, int attempts, Map<String, String> effects) {
  static EventReport of(String key, String effect, Outcome outcome) {
    Map<String, String> effects = new LinkedHashMap<>();
    effects.put(effect, outcome.label());
    return new EventReport(key, effect, outcome.label(), attempts(outcome), effects);
  }

  /** Adds a later effect; the report's outcome stays the first effect's unless this one is worse. */
  EventReport then(String nextEffect, Outcome next) {
    Map<String, String> all = new LinkedHashMap<>(effects);
    all.put(nextEffect, next.label());
    boolean worse = next instanceof Outcome.InFlight || next instanceof Outcome.Conflict;
    return worse
        ? new EventReport(key, nextEffect, next.label(), attempts(next), all)
        : new EventReport(key, effect, outcome, attempts, all);
  }

  static int attempts(Outcome outcome) {
    return switch (outcome) {
      case Outcome.Processed p -> p.attempts();
      case Outcome.Duplicate d -> d.attempts();
      case Outcome.InFlight i -> i.attempts();
      case Outcome.Conflict c -> 0;
      case Outcome.Rejected r -> 1;
    };
  }

  boolean inFlight() {
    return "in_flight".equals(outcome);
  }
}
