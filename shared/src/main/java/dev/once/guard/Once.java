package dev.once.guard;

import dev.once.guard.Outcome.Conflict;
import dev.once.guard.Outcome.Duplicate;
import dev.once.guard.Outcome.InFlight;
import dev.once.guard.Outcome.Processed;
import dev.once.guard.Outcome.Rejected;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import java.util.Map;
import java.util.Optional;

/**
 * Runs one named effect for one key at most once, and says what happened.
 *
 * <p>An effect that throws {@link PermanentFailure} is rejected for good; any other failure releases the
 * claim (so the next delivery retries at once) and is rethrown, so the platform redelivers. An external
 * effect (publish, notify) that succeeded but whose completion could not be recorded may run again on
 * redelivery: it is at-least-once, and carries the key so its receiver can drop the copy. An effect whose
 * target is Firestore ({@link #runCommitted}) commits with its completion, so it cannot be doubled.
 */
public final class Once {
  /** An effect on the outside world; returns what to record as its result. */
  @FunctionalInterface
  public interface Effect {
    Map<String, Object> perform(Attempt attempt) throws Exception;
  }

  /** An effect whose writes go to Firestore in the completing commit. */
  @FunctionalInterface
  public interface CommittedEffect {
    Completion perform(Attempt attempt) throws Exception;
  }

  private final Ledger ledger;

  public Once(Ledger ledger) {
    this.ledger = ledger;
  }

  /**
   * The cheap check before an expensive call (one read): the final outcome when the effect is done or
   * rejected, a conflict when the fingerprint differs; empty when it must still be claimed.
   */
  public Optional<Outcome> peek(IdempotencyKey key, String effect, String fingerprint) {
    return ledger.lookup(key, effect)
        .map(record -> ClaimResult.settled(record, fingerprint))
        .filter(settled -> !(settled instanceof ClaimResult.Busy) && !(settled instanceof ClaimResult.Expired))
        .map(settled -> answer(key, effect, settled));
  }

  /** {@link #peek(IdempotencyKey, String, String)} for an effect whose payload is not compared. */
  public Optional<Outcome> peek(IdempotencyKey key, String effect) {
    return peek(key, effect, null);
  }

  /** The record as it stands (one read), for a caller that must tell a live claim from none or an expired one. */
  public Optional<LedgerRecord> record(IdempotencyKey key, String effect) {
    return ledger.lookup(key, effect);
  }

  /** {@link #run(IdempotencyKey, String, String, Effect)} for an effect whose payload is not compared. */
  public Outcome run(IdempotencyKey key, String effect, Effect action) {
    return run(key, effect, null, action);
  }

  /**
   * Runs {@code action} unless the effect ran, was refused, or is being run for {@code key}.
   *
   * @param fingerprint what identifies the payload (a hash): the same key with another fingerprint is a conflict
   */
  public Outcome run(IdempotencyKey key, String effect, String fingerprint, Effect action) {
    return runCommitted(key, effect, fingerprint, attempt -> Completion.of(action.perform(attempt), SideWrites.NONE));
  }

  /** {@link #runCommitted(IdempotencyKey, String, String, CommittedEffect)} without a payload fingerprint. */
  public Outcome runCommitted(IdempotencyKey key, String effect, CommittedEffect action) {
    return runCommitted(key, effect, null, action);
  }

  /** As {@link #run}, for an effect whose writes commit with its completion. */
  public Outcome runCommitted(IdempotencyKey key, String effect, String fingerprint, CommittedEffect action) {
    ClaimResult claimed = ledger.claim(key, effect, fingerprint);
    return claimed instanceof ClaimResult.Acquired acquired
        ? perform(acquired.claim(), action)
        : answer(key, effect, claimed);
  }

  /** The outcome of a claim this delivery did not acquire. */
  private static Outcome answer(IdempotencyKey key, String effect, ClaimResult notAcquired) {
    return switch (notAcquired) {
      case ClaimResult.Acquired acquired -> throw new IllegalArgumentException("an acquired claim is performed");
      case ClaimResult.Expired expired -> throw new IllegalArgumentException("an expired claim is taken over");
      case ClaimResult.AlreadyDone done -> new Duplicate(done.outcome(), done.attempts());
      case ClaimResult.AlreadyRejected rejected -> new Rejected(rejected.reason(), false);
      case ClaimResult.Busy busy -> new InFlight(busy.leaseExpiresAt(), busy.attempts());
      case ClaimResult.FingerprintMismatch mismatch -> conflict(key, effect, mismatch.stored(), mismatch.offered());
    };
  }

  private Outcome perform(Claim claim, CommittedEffect action) {
    Attempt attempt = new Attempt(claim.key(), claim.effect(), claim.attempts(), claim.token());
    CrashPoints.reached("after-claim", claim.effect(), claim.key());
    Completion completion;
    try {
      completion = action.perform(attempt);
    } catch (PermanentFailure refused) {
      ledger.reject(claim, refused.getMessage(), refused.writes());
      return new Rejected(refused.getMessage(), true);
    } catch (Exception failure) {
      throw releaseAndRethrow(claim, failure);
    }
    CrashPoints.reached("before-complete", claim.effect(), claim.key());
    try {
      ledger.complete(claim, completion.result(), completion.writes());
    } catch (LeaseLost lost) {
      throw lost;
    } catch (IllegalArgumentException unrecordable) {
      // The result itself cannot be stored (a value Firestore has no type for): every retry would repeat the
      // effect and fail the same way, so the effect is refused for good, with the reason, instead.
      String reason = "the result could not be recorded: " + describe(unrecordable);
      ledger.reject(claim, reason, SideWrites.NONE);
      return new Rejected(reason, true);
    } catch (RuntimeException notRecorded) {
      // The effect ran but is not recorded; releasing lets the redelivery retry at once instead of after the lease.
      throw releaseAndRethrow(claim, notRecorded);
    }
    CrashPoints.reached("after-complete", claim.effect(), claim.key());
    return new Processed(completion.result(), claim.attempts());
  }

  private RuntimeException releaseAndRethrow(Claim claim, Exception failure) {
    try {
      ledger.release(claim, describe(failure));
    } catch (RuntimeException releaseFailed) {
      // The lease will expire instead; the original failure is what the caller must see.
      failure.addSuppressed(releaseFailed);
    }
    if (failure instanceof RuntimeException runtime) {
      return runtime;
    }
    return new EffectFailed(claim.effect() + " failed for " + claim.key() + ": " + describe(failure), failure);
  }

  /** The failure and its root cause, for the record's {@code error}: "GenAiIOException: … (cause: timeout)". */
  static String describe(Throwable failure) {
    String message = failure.getMessage();
    String described = failure.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root != failure && root.getMessage() != null && !described.contains(root.getMessage())) {
      described += " (cause: " + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
    }
    return described;
  }

  private static Conflict conflict(IdempotencyKey key, String effect, String stored, String offered) {
    Log.error("idempotency key reused with a different payload; the effect was not run",
        Map.of("key", key.value(), "effect", effect, "storedFingerprint", String.valueOf(stored),
            "offeredFingerprint", String.valueOf(offered)));
    return new Conflict(stored, offered);
  }
}
