package dev.once.ledger;

/** The life of a ledger record: claimed by one delivery, then done or rejected for good. */
public enum RecordState {
  CLAIMED,
  DONE,
  REJECTED
}
