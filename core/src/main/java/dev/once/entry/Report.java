package dev.once.entry;

import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one event came to: the outcome of its deciding effect (the first that did not simply pass), every effect's
 * label, and details for its log line ({@code costMicroUsd}, say). One event, one report, one log line. Made with
 * {@link #of}, then {@link #then}, {@link #as} and {@link #with}.
 */
public final class Report {
  private final String key;
  private final String effect;
  private final OutcomeLabel outcome;
  private final int attempts;
  private final Map<String, String> effects;
  private final Map<String, Object> details;

  private Report(String key, String effect, OutcomeLabel outcome, int attempts, Map<String, String> effects,
      Map<String, Object> details) {
    this.key = key;
    this.effect = effect;
    this.outcome = outcome;
    this.attempts = attempts;
    // In the order the event met them: the log line reads "analyse→processed, publish→processed".
    this.effects = Collections.unmodifiableMap(new LinkedHashMap<>(effects));
    this.details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
  }

  /** The event's key. */
  public String key() {
    return key;
  }

  /** The deciding effect. */
  public String effect() {
    return effect;
  }

  /** The deciding effect's label: the event's, in its log line. */
  public OutcomeLabel outcome() {
    return outcome;
  }

  public int attempts() {
    return attempts;
  }

  /** Every effect's label, in the order the event met them. */
  public Map<String, String> effects() {
    return effects;
  }

  /** The details of the log line. */
  public Map<String, Object> details() {
    return details;
  }

  public static Report of(IdempotencyKey key, String effect, Outcome outcome) {
    return of(key, effect, outcome.label(), attempts(outcome));
  }

  /** An event that came to {@code label} without running an effect through the guard (deferred, say). */
  public static Report of(IdempotencyKey key, String effect, OutcomeLabel label, int attempts) {
    Map<String, String> effects = new LinkedHashMap<>();
    effects.put(effect, label.label());
    return new Report(key.value(), effect, label, attempts, effects, Map.of());
  }

  /** Adds a later effect; the report's outcome stays the first effect's unless this one is worse. */
  public Report then(String nextEffect, Outcome next) {
    Map<String, String> all = new LinkedHashMap<>(effects);
    all.put(nextEffect, next.label().label());
    boolean worse = next instanceof Outcome.InFlight || next instanceof Outcome.Conflict;
    return worse
        ? new Report(key, nextEffect, next.label(), attempts(next), all, details)
        : new Report(key, effect, outcome, attempts, all, details);
  }

  /** The same report, labelled otherwise (a poller's duplicate is {@link OutcomeLabel#RELISTED}). */
  public Report as(OutcomeLabel label) {
    Map<String, String> all = new LinkedHashMap<>(effects);
    all.put(effect, label.label());
    return new Report(key, effect, label, attempts, all, details);
  }

  /** The same report with one more detail for its log line. */
  public Report with(String name, Object value) {
    Map<String, Object> more = new LinkedHashMap<>(details);
    more.put(name, value);
    return new Report(key, effect, outcome, attempts, effects, more);
  }

  /** Logs the event's one line to {@code log}: its details (cost, reason, …) and every effect's label. */
  public void log(Log log, String function, long startedNanos) {
    Map<String, Object> line = new LinkedHashMap<>(details);
    line.put("effects", effects);
    EventLog.record(log, function, key, effect, outcome, attempts, EventLog.elapsedMs(startedNanos), line);
  }

  /** Another delivery holds the claim: the event must come again. */
  public boolean inFlight() {
    return outcome == OutcomeLabel.IN_FLIGHT;
  }

  static int attempts(Outcome outcome) {
    return switch (outcome) {
      case Outcome.Processed p -> p.attempts();
      case Outcome.Duplicate d -> d.attempts();
      case Outcome.InFlight i -> i.attempts();
      case Outcome.Conflict c -> 0;
      case Outcome.Deferred d -> d.attempts();
      case Outcome.Rejected r -> 1;
    };
  }

  @Override
  public String toString() {
    return "Report[key=" + key + ", effect=" + effect + ", outcome=" + outcome + ", attempts=" + attempts
        + ", effects=" + effects + ", details=" + details + "]";
  }
}
