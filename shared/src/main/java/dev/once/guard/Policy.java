package dev.once.guard;

import dev.once.internal.ledger.ClaimOptions;
import dev.once.internal.ledger.NextClaim;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.util.function.Function;

/**
 * How {@link Once} runs one effect: the payload's fingerprint, the cap on tries that may have run (for a paid effect)
 * and what refusing it then writes, the lease it needs, and the effect that always follows it (claimed in the same
 * commit that completes this one).
 *
 * @param onGiveUp the writes that record the refusal when the cap is reached, given its reason
 * @param then the effect that follows, or null
 */
public record Policy(String fingerprint, int maxAttempts, Function<String, SideWrites> onGiveUp, Duration lease,
    String then) {
  public static final Policy DEFAULT = new Policy(null, 0, reason -> SideWrites.NONE, null, null);

  public static Policy fingerprint(String fingerprint) {
    return DEFAULT.withFingerprint(fingerprint);
  }

  public Policy withFingerprint(String value) {
    return new Policy(value, maxAttempts, onGiveUp, lease, then);
  }

  /**
   * At most {@code tries} tries that may have run (a timeout, a reset, a crash: all but refusals);
   * past it the effect is refused for good, with {@code onGiveUp}'s writes, instead of tried again.
   */
  public Policy capped(int tries, Function<String, SideWrites> giveUp) {
    if (tries < 1) {
      throw new IllegalArgumentException("a cap allows at least one try, got " + tries);
    }
    return new Policy(fingerprint, tries, giveUp, lease, then);
  }

  /** A lease long enough for the effect's own bound (a paid call's timeout), when that is longer than the ledger's. */
  public Policy leaseAtLeast(Duration value) {
    return new Policy(fingerprint, maxAttempts, onGiveUp, value, then);
  }

  public Policy then(String effect) {
    return new Policy(fingerprint, maxAttempts, onGiveUp, lease, effect);
  }

  ClaimOptions claimOptions() {
    return new ClaimOptions(fingerprint, lease, maxAttempts);
  }

  NextClaim next() {
    return then == null ? null : NextClaim.of(then);
  }
}
