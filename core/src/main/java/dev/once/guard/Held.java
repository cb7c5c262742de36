package dev.once.guard;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;

/**
 * The claim of the effect that follows another, taken for this delivery in the commit that completed the first
 * ({@link Policy#then}, {@link Outcome.Processed#next}): run it with {@link Once#runHeld}. Opaque: it can only be
 * made by that commit, and only run once.
 */
public final class Held {
  private final Claim claim;

  Held(Claim claim) {
    this.claim = claim;
  }

  Claim claim() {
    return claim;
  }

  public IdempotencyKey key() {
    return claim.key();
  }

  public String effect() {
    return claim.effect();
  }

  @Override
  public String toString() {
    return "Held[" + claim.effect() + " for " + claim.key() + "]";
  }
}
