package dev.once.ledger;

/** Firestore did not answer in time, or contention outlasted the retry budget. Transient: redeliver. */
public final class LedgerUnavailable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LedgerUnavailable(String message, Throwable cause) {
    super(message, cause);
  }
}
