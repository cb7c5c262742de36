package dev.once.testing;

import dev.once.ledger.Claim;
import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.Ledger;
import dev.once.ledger.NextClaim;
import dev.once.ledger.SideWrites;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A ledger whose process dies once before each effect's first completion: the effect ran, its completion is not
 * committed, and the claim stays held (its lease runs out) — a crash after the effect.
 */
final class CrashingLedger extends ForwardingLedger {
  private final Set<String> crashed = ConcurrentHashMap.newKeySet();

  CrashingLedger(Ledger ledger) {
    super(ledger);
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    if (crashed.add(claim.recordId())) {
      throw new SimulatedCrash("after " + claim.effect() + " ran for " + claim.key() + ", before its completion");
    }
    return super.complete(claim, outcome, writes, next);
  }
}
