package dev.once.guard;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.NextClaim;
import dev.once.ledger.ResultCodec;
import dev.once.ledger.Settlement;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.util.function.Function;

/**
 * How {@link Once} runs one effect, built by name from {@link #DEFAULT} (never by position): the payload's
 * fingerprint, the cap on tries that may have run (a paid or visible effect) and what refusing it then writes, the
 * lease it needs, and the effect that always follows it (claimed in the same commit that completes this one).
 *
 * <p>{@link #DEFAULT} retries a try that may have run until it is recorded done: right for an effect that is
 * harmless repeated (a Firestore write committed with the completion, a publish or a POST its receiver dedups by
 * key). {@link #atMostOnce()} never starts a second try after one that may have run: the next delivery gives the
 * effect up (rejected, {@link Outcome.Rejected#gaveUp}).
 */
public final class Policy {
  /** No fingerprint, no cap, the ledger's lease, nothing that follows. */
  public static final Policy DEFAULT = new Policy(null, 0, reason -> SideWrites.NONE, null, null, null);
  /** {@link #maxAttempts()} of a policy capped at the guard's ONCE_MAX_ATTEMPTS ({@link Once#maxAttempts()}). */
  static final int GUARDS_CAP = -1;

  private final String fingerprint;
  private final int maxAttempts;
  private final Function<String, SideWrites> onGiveUp;
  private final Duration lease;
  private final String then;
  private final Settlement alongside;

  private Policy(String fingerprint, int maxAttempts, Function<String, SideWrites> onGiveUp, Duration lease,
      String then, Settlement alongside) {
    this.fingerprint = fingerprint;
    this.maxAttempts = maxAttempts;
    this.onGiveUp = onGiveUp;
    this.lease = lease;
    this.then = then;
    this.alongside = alongside;
  }

  public static Policy fingerprint(String fingerprint) {
    return DEFAULT.withFingerprint(fingerprint);
  }

  /**
   * At most one try that may have run (a timeout, a reset, a 5xx, a crash: all but {@link Refusal}s): a welcome
   * e-mail, a charge without an idempotency key downstream. Tries refused before anything was done
   * ({@link Refusal#notPerformed}) do not count.
   */
  public static Policy atMostOnce() {
    return DEFAULT.capped(1, reason -> SideWrites.NONE);
  }

  /** The same policy, comparing payloads by {@code value}: the same key with another fingerprint is a conflict. */
  public Policy withFingerprint(String value) {
    return new Policy(value, maxAttempts, onGiveUp, lease, then, alongside);
  }

  /**
   * At most {@code tries} tries that may have run (a timeout, a reset, a crash: all but refusals); past it the effect
   * is refused for good, with {@code giveUp}'s writes (given the reason), instead of tried again.
   */
  public Policy capped(int tries, Function<String, SideWrites> giveUp) {
    if (tries < 1) {
      throw new IllegalArgumentException("a cap allows at least one try, got " + tries);
    }
    return new Policy(fingerprint, tries, giveUp, lease, then, alongside);
  }

  /** {@link #capped} at the guard's cap, ONCE_MAX_ATTEMPTS ({@link Once#maxAttempts()}; 5 unless set). */
  public Policy cappedAtMaxAttempts(Function<String, SideWrites> giveUp) {
    return new Policy(fingerprint, GUARDS_CAP, giveUp, lease, then, alongside);
  }

  /** A lease long enough for the effect's own bound (a paid call's timeout), when that is longer than the ledger's. */
  public Policy leaseAtLeast(Duration value) {
    return new Policy(fingerprint, maxAttempts, onGiveUp, value, then, alongside);
  }

  /**
   * The effect that always follows this one for the same key, claimed in the commit that completes this one: one
   * commit fewer, and no gap in which a crash leaves this done and the next unclaimed. The claim comes back as
   * {@link Outcome.Processed#next}, to run with {@link Once#runHeld}.
   */
  public Policy then(String effect) {
    return new Policy(fingerprint, maxAttempts, onGiveUp, lease, effect, alongside);
  }

  /**
   * Another key's record to create done with {@code result} in the commit of this effect's first claim
   * ({@link dev.once.ledger.Ledger#claimAndSettle}): one commit fewer than {@link Once#settle} inside the effect.
   * The effect learns from {@link Attempt#settledAlongside()} whether that commit created it; when not (the record
   * existed, or the claim was taken over or answered otherwise), it settles it itself if it still must.
   */
  public <T> Policy settling(IdempotencyKey key, String effect, ResultCodec<T> codec, T result) {
    return new Policy(fingerprint, maxAttempts, onGiveUp, lease, then,
        new Settlement(key, effect, codec.encode(result)));
  }

  /** The payload's fingerprint, or null when payloads are not compared. */
  public String fingerprint() {
    return fingerprint;
  }

  /** The cap on tries that may have run: 0 for none, -1 for the guard's. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The writes that record the refusal when the cap is reached, given its reason. */
  public Function<String, SideWrites> onGiveUp() {
    return onGiveUp;
  }

  /** The least lease the effect needs, or null for the ledger's. */
  public Duration lease() {
    return lease;
  }

  /** The effect that follows, or null. */
  public String then() {
    return then;
  }

  /** The record created done with the first claim, or null. */
  public Settlement alongside() {
    return alongside;
  }

  ClaimOptions claimOptions(int guardsCap) {
    return new ClaimOptions(fingerprint, lease, maxAttempts == GUARDS_CAP ? guardsCap : maxAttempts);
  }

  NextClaim next() {
    return then == null ? null : NextClaim.of(then);
  }

  @Override
  public String toString() {
    return "Policy[fingerprint=" + fingerprint + ", maxAttempts=" + maxAttempts + ", lease=" + lease + ", then=" + then
        + ", alongside=" + (alongside == null ? null : alongside.effect()) + "]";
  }
}
