package dev.once.internal.budget;

import dev.once.firestore.FirestoreLedger;
import dev.once.internal.ledger.LedgerConfig;
import dev.once.ledger.Ledger;
import dev.once.testing.TestFirestore;

/** The race on Firestore (the emulator): sixteen threads, real reads and increments over gRPC. */
class FirestoreBudgetRaceTest extends BudgetRaceContract {
  @Override
  Ledger ledger() {
    TestFirestore.clear();
    return new FirestoreLedger(TestFirestore.client(), LedgerConfig.defaults());
  }
}
