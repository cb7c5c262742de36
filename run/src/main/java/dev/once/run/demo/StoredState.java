package dev.once.run.demo;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import java.util.Optional;

/** What the demo reads from Firestore about a key: the ledger, and the analyses and billing entries found by key. */
interface StoredState {
  Optional<LedgerRecord> record(IdempotencyKey key, String effect);

  /** Billing entries whose {@code key} field is this key (two would both be found, whatever their ids). */
  int billingEntries(IdempotencyKey key);

  /** Analyses whose {@code key} field is this key. */
  int analyses(IdempotencyKey key);
}
