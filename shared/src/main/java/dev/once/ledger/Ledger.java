package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * One record per (key, effect), recording who may run the effect and whether it ran: the persistence SPI of
 * {@code Once}. {@link FirestoreLedger} is the one to deploy; {@link InMemoryLedger} has the same semantics for unit
 * tests (one contract test suite runs against both).
 */
public interface Ledger {
  /** The record as it is now (one read), or empty when the effect was never claimed. */
  Optional<LedgerRecord> lookup(IdempotencyKey key, String effect);

  /** Claims the effect for this delivery, or says why not. {@code fingerprint} may be null (not compared). */
  ClaimResult claim(IdempotencyKey key, String effect, String fingerprint);

  /** Marks the effect done with its outcome, in one commit with {@code writes}. Throws {@link LeaseLost}. */
  void complete(Claim claim, Map<String, Object> outcome, SideWrites writes);

  /** Refuses the effect for good, in one commit with {@code writes}. Throws {@link LeaseLost}. */
  void reject(Claim claim, String reason, SideWrites writes);

  /** Gives the lease up after a transient failure so the next delivery can retry at once. */
  void release(Claim claim, String error);

  /**
   * An operator gives up the claim held with {@code token} (one read first tells the token): its lease ends now, so
   * the next delivery takes it over, and the record says who released it, when and why. Throws {@link LeaseLost}
   * when that token no longer holds a claim (taken over, or finished: a race with the holder has one winner).
   */
  void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason);

  /** A ledger built on first use: an instance that never handles an event never builds its store's client. */
  static Ledger lazy(Supplier<? extends Ledger> factory) {
    return new LazyLedger(factory);
  }
}
