package dev.once.run.demo;

import dev.once.budget.DaySpend;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Optional;

/** What the demo reads from Firestore about a key: the ledger, and the analyses and billing entries found by key. */
interface StoredState {
  Optional<LedgerRecord> record(IdempotencyKey key, String effect);

  /** Billing entries whose {@code key} field is this key (two would both be found, whatever their ids). */
  int billingEntries(IdempotencyKey key);

  /** Analyses whose {@code key} field is this key. */
  int analyses(IdempotencyKey key);

  /** What the document's billing entry says it cost, in µUSD (0 without one). */
  default long costMicroUsd(IdempotencyKey key) {
    return 0;
  }

  /** Today's Gemini spend as the spending guard's counters hold it (nothing counted without a budget). */
  default DaySpend spendToday() {
    return new DaySpend(LocalDate.now(ZoneOffset.UTC), 0, 0);
  }
}
