package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.util.Map;
import java.util.Optional;

/**
 * One record per (key, effect), recording who may run the effect and whether it ran. {@link FirestoreLedger}
 * is the implementation; the interface keeps {@code Once} testable with faults injected around it.
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
}
