package dev.once.config;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Settings read from the environment. A missing required setting is a {@link MissingSetting}, an unusable value an
 * {@link InvalidSetting}, each naming the variable; functions read theirs when an instance starts, so a deployment
 * that lacks one fails to start instead of failing every event.
 */
public final class Settings {
  private final Map<String, String> env;

  private Settings(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  public static Settings fromEnvironment() {
    return new Settings(System.getenv());
  }

  public static Settings of(Map<String, String> env) {
    return new Settings(env);
  }

  /** The value, else the default; empty when neither is there. */
  public Optional<String> optional(Setting setting) {
    String value = env.get(setting.name());
    if (value == null || value.isBlank()) {
      return Optional.ofNullable(setting.defaultValue());
    }
    return Optional.of(value.strip());
  }

  public String required(Setting setting) {
    return optional(setting).orElseThrow(() -> new MissingSetting(
        setting.name() + " is not set: " + setting.description()));
  }

  public long positiveLong(Setting setting) {
    String value = required(setting);
    try {
      long parsed = Long.parseLong(value);
      if (parsed > 0) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidSetting(setting, "must be a positive whole number, got \"" + value + "\"");
  }

  public int positiveInt(Setting setting) {
    long value = positiveLong(setting);
    if (value > Integer.MAX_VALUE) {
      throw new InvalidSetting(setting, "must be at most " + Integer.MAX_VALUE + ", got " + value);
    }
    return (int) value;
  }

  public Duration seconds(Setting setting) {
    return Duration.ofSeconds(positiveLong(setting));
  }

  public Duration days(Setting setting) {
    return Duration.ofDays(positiveLong(setting));
  }
}
