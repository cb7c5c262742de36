package dev.once.ledger;

/**
 * A holder tried to finish a claim it no longer holds: another delivery took it over after its lease expired,
 * or it was finished already. Nothing was written. Transient for the caller: the redelivery finds the record
 * in the new holder's hands, or done.
 */
public final class LeaseLost extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LeaseLost(String message) {
    super(message);
  }
}
