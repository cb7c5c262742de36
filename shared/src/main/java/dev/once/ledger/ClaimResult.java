package dev.once.ledger;

import java.time.Instant;
import java.util.Map;

/** What {@link Ledger#claim} found: the claim itself, or why the effect must not run now. */
public sealed interface ClaimResult {
  /** This delivery holds the claim and should run the effect. */
  record Acquired(Claim claim) implements ClaimResult {}

  /** The effect already ran; {@code outcome} is what its holder stored. */
  record AlreadyDone(Map<String, Object> outcome, int attempts) implements ClaimResult {}

  /** The effect was refused for good earlier. */
  record AlreadyRejected(String reason) implements ClaimResult {}

  /** Another delivery holds a live lease: it may still finish, or its lease will expire. */
  record Busy(Instant leaseExpiresAt, int attempts) implements ClaimResult {}

  /** The key was used before for a different payload: the effect is not run. */
  record FingerprintMismatch(String stored, String offered) implements ClaimResult {}
}
