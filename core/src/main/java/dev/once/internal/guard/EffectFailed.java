package dev.once.internal.guard;

/** A checked exception from an effect, rethrown unchecked after the claim was released. Transient. */
public final class EffectFailed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public EffectFailed(String message, Throwable cause) {
    super(message, cause);
  }
}
