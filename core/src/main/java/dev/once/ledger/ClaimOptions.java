package dev.once.ledger;

import java.time.Duration;

/**
 * How a delivery claims an effect.
 *
 * @param fingerprint what identifies the payload (a hash), or null: another fingerprint under the same key is a
 *     conflict
 * @param lease the least lease the claim needs (a paid call whose own timeout is longer than the ledger's configured
 *     lease takes one that covers it), or null for the configured one
 * @param maxSpent the most tries that may have carried the effect out before the effect is given up (0: no cap). A
 *     takeover past it is handed over {@link Claim#exhausted() exhausted}, for the caller to refuse for good.
 */
public record ClaimOptions(String fingerprint, Duration lease, int maxSpent) {
  public static final ClaimOptions DEFAULTS = new ClaimOptions(null, null, 0);

  public ClaimOptions {
    if (lease != null && (lease.isNegative() || lease.isZero())) {
      throw new IllegalArgumentException("a lease must be positive, got " + lease);
    }
    if (maxSpent < 0) {
      throw new IllegalArgumentException("maxSpent must not be negative, got " + maxSpent);
    }
  }

  public ClaimOptions withFingerprint(String value) {
    return new ClaimOptions(value, lease, maxSpent);
  }

  public ClaimOptions withLease(Duration value) {
    return new ClaimOptions(fingerprint, value, maxSpent);
  }

  public ClaimOptions capped(int value) {
    return new ClaimOptions(fingerprint, lease, value);
  }

  /** The lease to write: the ledger's, or this one when it is longer. */
  public Duration leaseOr(Duration configured) {
    return lease == null || lease.compareTo(configured) < 0 ? configured : lease;
  }
}
