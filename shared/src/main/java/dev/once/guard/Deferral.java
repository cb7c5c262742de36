package dev.once.guard;

import dev.once.ledger.SideWrites;

/**
 * Thrown by an effect that must wait for something outside the event before it may run — a spending budget used up
 * for the day, say — and was not carried out: the claim is released as not performed (the try does not count against
 * a cap), together with {@code writes} (the record that says the work waits, and why), and {@link Once} answers
 * {@link Outcome.Deferred}, so the event is acknowledged rather than redelivered. Whatever resumes the work claims the
 * effect again, as a redelivery would.
 */
public class Deferral extends Exception {
  private static final long serialVersionUID = 1L;
  private final transient SideWrites writes;

  public Deferral(String reason, SideWrites writes) {
    super(reason);
    this.writes = writes;
  }

  public SideWrites writes() {
    return writes;
  }
}
