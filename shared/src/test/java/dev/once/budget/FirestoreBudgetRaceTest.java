package dev.once.budget;

import dev.once.firestore.FirestoreLedger;
import dev.once.firestore.TestFirestore;
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
