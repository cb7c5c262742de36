package dev.once.key;

/** An event that yields no usable idempotency key: permanent, retrying the same event cannot help. */
public final class InvalidKey extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidKey(String message) {
    super(message);
  }
}
