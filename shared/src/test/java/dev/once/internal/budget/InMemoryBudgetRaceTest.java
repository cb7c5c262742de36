package dev.once.internal.budget;

import dev.once.ledger.InMemoryLedger;
import dev.once.ledger.Ledger;

/** The race on the in-memory ledger (each read and each commit atomic, as Firestore's). */
class InMemoryBudgetRaceTest extends BudgetRaceContract {
  @Override
  Ledger ledger() {
    return new InMemoryLedger();
  }
}
