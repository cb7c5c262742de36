package dev.once.firestore;

import dev.once.ledger.Ledger;
import dev.once.testing.InMemoryLedger;

/** The race on the in-memory ledger (each read and each commit atomic, as Firestore's). */
class InMemoryBudgetRaceTest extends BudgetRaceContract {
  @Override
  Ledger ledger() {
    return new InMemoryLedger();
  }
}
