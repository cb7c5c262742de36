package dev.once.guard;

import dev.once.ledger.SideWrites;

/**
 * Thrown by an effect that certainly did not happen: refused before anything was done (a throttled or overloaded
 * service that bills nothing, a document that could not be read before the paid call). The claim is released and the
 * try recorded as not performed, so it does not count against a cap of tries, in one commit with {@link #writes()}
 * (undoing what the try set aside, such as a reservation of money); the failure is rethrown, so the platform
 * redelivers. Anything else an effect throws is taken to have possibly happened.
 */
public class NotPerformed extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient SideWrites writes;

  public NotPerformed(String message, Throwable cause) {
    this(message, cause, SideWrites.NONE);
  }

  public NotPerformed(String message, Throwable cause, SideWrites writes) {
    super(message, cause);
    this.writes = writes;
  }

  /** Committed with the release. */
  public SideWrites writes() {
    return writes == null ? SideWrites.NONE : writes;
  }
}
