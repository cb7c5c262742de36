package dev.once.guard;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import java.time.Duration;

/** The delivery that holds the claim, as its effect sees it: which try this is, and its lease. */
public final class Attempt {
  private final LeaseRenewal renewal;
  private final boolean settledAlongside;

  Attempt(LeaseRenewal renewal, boolean settledAlongside) {
    this.renewal = renewal;
    this.settledAlongside = settledAlongside;
  }

  public IdempotencyKey key() {
    return renewal.claim().key();
  }

  public String effect() {
    return renewal.claim().effect();
  }

  /** Which try this is: 1 for the first delivery to hold the claim. */
  public int number() {
    return renewal.claim().attempts();
  }

  /**
   * How many tries before this one may have carried the effect out (failed after their request left, or abandoned by
   * a holder that died): where a retry first looks for what they did. Read from the record's {@code spent} counter,
   * which counts every try, not from its history of tries, which keeps the latest few only: after enough tries that
   * certainly did nothing, the history no longer shows an early one that may have been paid for.
   */
  public int earlierTriesThatMayHaveRun() {
    Claim claim = renewal.claim();
    return claim.exhausted() ? claim.spent() : Math.max(0, claim.spent() - 1);
  }

  /**
   * Which run of the effect this is: 1, or N after an operator invalidated the N - 1 runs before on purpose
   * ({@code once invalidate}), so the effect runs once more.
   */
  public int generation() {
    return renewal.claim().generation();
  }

  /**
   * The key what this run shows outside must carry (a message's {@code idempotency_key}, a notification's
   * {@code Idempotency-Key}): the effect's key on its first run, {@code KEY/rerun-N} on run N, so a receiver that
   * drops copies by key sees a deliberate re-run as a new event ({@link IdempotencyKey#rerun}).
   */
  public IdempotencyKey downstreamKey() {
    return key().rerun(generation());
  }

  /**
   * Whether this try's claim created its policy's {@link Policy#settling settlement} record in the same commit: true
   * only for a first claim that did; false when the policy has none, the record existed, or the claim was taken over.
   */
  public boolean settledAlongside() {
    return settledAlongside;
  }

  /** The fencing token this delivery holds the claim with. */
  public long token() {
    return renewal.claim().token();
  }

  /**
   * Makes sure the lease outlasts {@code work} (a paid call's or a publish's own timeout) from now, by the store's
   * clock, renewing it when it would not; throws a {@link Refusal} not performed if not. Call it right before work that
   * costs money or is seen outside: a holder whose lease may run out first must not start it (Cloud Run does not
   * stop a request's thread at its timeout, so "lease longer than the timeout" is not enough on its own).
   */
  public void ensureLease(Duration work) {
    renewal.ensure(work);
  }
}
