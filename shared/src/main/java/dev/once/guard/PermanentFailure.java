package dev.once.guard;

import dev.once.ledger.SideWrites;

/**
 * Thrown by an effect that must never be retried (bad input, a document that no longer exists): the claim is
 * rejected with {@code reason}, together with {@code writes} (a rejected analysis, say), and acknowledged.
 */
public class PermanentFailure extends Exception {
  private static final long serialVersionUID = 1L;
  private final transient SideWrites writes;

  public PermanentFailure(String reason) {
    this(reason, SideWrites.NONE);
  }

  public PermanentFailure(String reason, SideWrites writes) {
    super(reason);
    this.writes = writes;
  }

  public SideWrites writes() {
    return writes;
  }
}
