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

  /** A whole number from {@code least} to {@code most}; anything else fails, naming the variable and the range. */
  public long wholeNumber(Setting setting, long least, long most) {
    String value = required(setting);
    try {
      long parsed = Long.parseLong(value);
      if (parsed >= least && parsed <= most) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    String range = most == Long.MAX_VALUE ? least + " or more" : "from " + least + " to " + most;
    throw new InvalidSetting(setting, "must be a whole number " + range + ", got \"" + value + "\"");
  }

  public long positiveLong(Setting setting) {
    return wholeNumber(setting, 1, Long.MAX_VALUE);
  }

  public int positiveInt(Setting setting) {
    return (int) wholeNumber(setting, 1, Integer.MAX_VALUE);
  }

  public Duration seconds(Setting setting) {
    return Duration.ofSeconds(positiveLong(setting));
  }

  public Duration days(Setting setting) {
    return Duration.ofDays(positiveLong(setting));
  }
}
