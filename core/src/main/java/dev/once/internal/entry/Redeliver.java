package dev.once.internal.entry;

/**
 * Thrown by a CloudEvent function so the platform delivers the event again later: another delivery holds the claim
 * (it may finish, or its lease expires and the redelivery takes over).
 */
public final class Redeliver extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public Redeliver(String message) {
    super(message, null, false, false);
  }
}
