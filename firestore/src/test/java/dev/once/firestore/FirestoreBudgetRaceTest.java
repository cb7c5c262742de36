package dev.once.firestore;

import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;

/** The race on Firestore (the emulator): sixteen threads, real reads and increments over gRPC. */
class FirestoreBudgetRaceTest extends BudgetRaceContract {
  @Override
  Ledger ledger() {
    TestFirestore.clear();
    return new FirestoreLedger(TestFirestore.client(), LedgerOptions.defaults());
  }
}
