package dev.once.ledger;

import java.time.Instant;
import java.util.Map;

/** What {@link Ledger#claim} found: the claim itself, or why the effect must not run now. */
public sealed interface ClaimResult {
  /** This delivery holds the claim and should run the effect. */
  record Acquired(Claim claim) implements ClaimResult {}

  /**
   * The effect already ran; {@code outcome} is what its holder stored.
   *
   * @param fingerprint the record's fingerprint (null when none was stored)
   */
  record AlreadyDone(Map<String, Object> outcome, int attempts, String fingerprint) implements ClaimResult {}

  /** The effect was refused for good earlier. */
  record AlreadyRejected(String reason, boolean gaveUp, String fingerprint) implements ClaimResult {}

  /** Another delivery holds a live lease: it may still finish, or its lease will expire. */
  record Busy(Instant leaseExpiresAt, int attempts) implements ClaimResult {}

  /** The key was used before for a different payload: the effect is not run. */
  record FingerprintMismatch(String stored, String offered) implements ClaimResult {}

  /**
   * The holder's lease ran out (it failed, released or died): the claim may be taken over. {@link Ledger#claim}
   * never answers this — it takes the claim over instead — but a look at the record ({@link #settled}) may.
   */
  record Expired(LedgerRecord record) implements ClaimResult {}

  /** What an existing record answers without writing: the one rule for a claim, a takeover and a pre-check. */
  public static ClaimResult settled(LedgerRecord record, String fingerprint) {
    if (record.fingerprint() != null && fingerprint != null && !record.fingerprint().equals(fingerprint)) {
      return new FingerprintMismatch(record.fingerprint(), fingerprint);
    }
    return switch (record.state()) {
      case DONE -> new AlreadyDone(record.outcome(), record.attempts(), record.fingerprint());
      case REJECTED -> new AlreadyRejected(record.error(), record.gaveUp(), record.fingerprint());
      case CLAIMED -> record.leaseLive() ? new Busy(record.leaseExpiresAt(), record.attempts()) : new Expired(record);
    };
  }
}
