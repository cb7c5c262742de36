package dev.once.config;

/** A required setting is unset, or set to something unusable. The message names the variable. */
public final class MissingSetting extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public MissingSetting(String message) {
    super(message);
  }
}
