package dev.once.config;

/** A setting is set to something unusable. The message names the variable and what it holds. */
public final class InvalidSetting extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public InvalidSetting(Setting setting, String problem) {
    super(setting.name() + " " + problem);
  }
}
