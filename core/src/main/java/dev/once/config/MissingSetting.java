package dev.once.config;

/** A required setting is unset (or blank). The message names the variable and what it is for. */
public final class MissingSetting extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public MissingSetting(String message) {
    super(message);
  }
}
