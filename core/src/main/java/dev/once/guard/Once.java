package dev.once.guard;

import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.guard.Outcome.Conflict;
import dev.once.guard.Outcome.Deferred;
import dev.once.guard.Outcome.Duplicate;
import dev.once.guard.Outcome.InFlight;
import dev.once.guard.Outcome.Processed;
import dev.once.guard.Outcome.Rejected;
import dev.once.internal.guard.EffectFailed;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.Ledgers;
import dev.once.ledger.RecordState;
import dev.once.ledger.ResultCodec;
import dev.once.ledger.SettledClaim;
import dev.once.ledger.Settlement;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Runs one named effect for one key until it is recorded done, and says what happened: once the completion is
 * committed, no delivery runs the effect again.
 *
 * <p>Every try is recorded on the ledger before the effect runs, and its lease is renewed while it runs. Writes to
 * Firestore commit with the completion ({@link Completion#committing}), so they happen exactly once. An effect on
 * the outside world (a POST, a publish) happens again when a try failed after its request left, or its process died
 * before the completion was committed: with {@link Policy#DEFAULT} such an effect is at least once, and must carry
 * {@link Attempt#key()} so its receiver can drop the copy; with {@link Policy#atMostOnce()} (or a {@link
 * Policy#capped cap}) no try starts after the cap of tries that may have run, and the effect is given up instead: at
 * most once. An effect that throws a {@link Refusal} was not carried out: rejected for good, released without
 * counting the try, or deferred, as its kind says; any other failure releases it as a try that may have run and is
 * rethrown, so the platform redelivers. Final answers are remembered per instance, so a warm duplicate costs no read.
 *
 * <p>Effect names match {@code [a-z][a-z0-9._-]{0,63}} (they are part of the record id and a log label); another is
 * an {@link IllegalArgumentException} at run time.
 */
public final class Once {
  /** The start of the reason an effect is refused with when its cap of tries was reached. */
  public static final String GAVE_UP = "gave up after ";
  /** The start of the error a deferred try is released with. */
  public static final String DEFERRED = "deferred: ";

  /**
   * An effect on the outside world. Returns what to record as its result, with the Firestore writes (if any) that
   * commit with that record ({@link Completion#committing}): one commit, so those writes cannot be doubled.
   */
  @FunctionalInterface
  public interface Effect {
    Completion perform(Attempt attempt) throws Exception;
  }

  /** ONCE_MAX_ATTEMPTS's default: the cap of {@link Policy#cappedAtMaxAttempts}. */
  public static final int DEFAULT_MAX_ATTEMPTS = Integer.parseInt(OnceSetting.ONCE_MAX_ATTEMPTS.defaultValue());
  private static final List<EffectListener> LISTENERS =
      ServiceLoader.load(EffectListener.class, Once.class.getClassLoader()).stream().map(ServiceLoader.Provider::get)
          .toList();

  private final Ledger ledger;
  private final SettledCache settled;
  private final Log log;
  private final int maxAttempts;

  public Once(Ledger ledger) {
    this(ledger, 10_000, Duration.ofMinutes(10));
  }

  /** The guard over {@code ledger}, with {@code settings}' ONCE_MAX_ATTEMPTS as its cap. */
  public static Once over(Ledger ledger, Settings settings) {
    return new Once(ledger).withMaxAttempts(settings.positiveInt(OnceSetting.ONCE_MAX_ATTEMPTS));
  }

  /** With a cache of at most {@code cachedEntries} final answers, each kept at most {@code cachedFor}. */
  public Once(Ledger ledger, int cachedEntries, Duration cachedFor) {
    this(ledger, new SettledCache(cachedEntries, cachedFor), Log.stdout(), DEFAULT_MAX_ATTEMPTS);
  }

  private Once(Ledger ledger, SettledCache settled, Log log, int maxAttempts) {
    this.ledger = ledger;
    this.settled = settled;
    this.log = log;
    this.maxAttempts = maxAttempts;
  }

  /** This guard, writing its log lines (and those of whatever logs through it) to {@code sink}; stdout by default. */
  public Once loggingTo(Log sink) {
    return new Once(ledger, settled, sink, maxAttempts);
  }

  /** This guard, with {@code tries} as the cap of {@link Policy#cappedAtMaxAttempts} (ONCE_MAX_ATTEMPTS). */
  public Once withMaxAttempts(int tries) {
    if (tries < 1) {
      throw new IllegalArgumentException("a cap allows at least one try, got " + tries);
    }
    return new Once(ledger, settled, log, tries);
  }

  /** The cap of tries that may have run for a policy {@link Policy#cappedAtMaxAttempts capped at it}. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** Where this guard's log lines go: the entry adapters and flows built on it log there too. */
  public Log log() {
    return log;
  }

  /**
   * The cheap check before an expensive call (one read, none when this instance knows the answer): the final
   * outcome when the effect is done or rejected, a conflict when the fingerprint differs; empty when it must still
   * be claimed.
   */
  public Optional<Outcome> peek(IdempotencyKey key, String effect, String fingerprint) {
    String id = Ledgers.recordId(key, effect);
    Optional<ClaimResult> known = settled.get(id, fingerprint);
    if (known.isPresent()) {
      return Optional.of(answer(key, effect, known.get()));
    }
    return ledger.lookup(key, effect)
        .map(record -> remember(id, ClaimResult.settled(record, fingerprint)))
        .filter(result -> !(result instanceof ClaimResult.Busy) && !(result instanceof ClaimResult.Expired))
        .map(result -> answer(key, effect, result));
  }

  /** {@link #peek(IdempotencyKey, String, String)} for an effect whose payload is not compared. */
  public Optional<Outcome> peek(IdempotencyKey key, String effect) {
    return peek(key, effect, null);
  }

  /** The record as it stands (one read), for a caller that must tell a live claim from none or an expired one. */
  public Optional<LedgerRecord> record(IdempotencyKey key, String effect) {
    return ledger.lookup(key, effect);
  }

  /**
   * Passes a finished effect on to its next run, for a reason of the function's own: when the record of (key, effect)
   * is done or rejected in {@code generation} ({@link LedgerRecord#generation()}, read with {@link #record}), it keeps
   * that run in its history and becomes a claim of the next generation whose lease is over, so the next {@link #run}
   * (of any delivery, on any instance) takes it over and runs the effect once more. This is
   * {@link Ledger#invalidate}, by {@code "once"}: one transaction, fenced on the generation, so of two callers
   * passing the same run on, one moves it and the other is answered false; a resend of its commit recognises itself.
   * False, writing nothing, when the record is not finished in that generation: absent, claimed, or moved on since it
   * was read (read it again to see by whom).
   *
   * <p>For a claim that stands for something which ended without happening: a claim on a document's content naming
   * the first copy, when that copy was refused or given up, passes to the next copy. Whatever it answers, this
   * instance forgets the final answer it remembered for the record, so its next {@link #run} or {@link #peek} reads
   * the ledger; another instance may still answer the finished run from its cache for a few minutes (at most the
   * cache's age), which a caller that must know reads through {@link #record}.
   */
  public boolean pass(IdempotencyKey key, String effect, int generation, String reason) {
    String id = Ledgers.recordId(key, effect);
    try {
      return ledger.invalidate(key, effect, generation, "once", reason);
    } finally {
      settled.forget(id);
    }
  }

  /** {@link #run(IdempotencyKey, String, Policy, Effect)} for an effect whose payload is not compared. */
  public Outcome run(IdempotencyKey key, String effect, Effect action) {
    return run(key, effect, Policy.DEFAULT, action);
  }

  /** @param fingerprint what identifies the payload (a hash): the same key with another fingerprint is a conflict */
  public Outcome run(IdempotencyKey key, String effect, String fingerprint, Effect action) {
    return run(key, effect, Policy.fingerprint(fingerprint), action);
  }

  /** Runs {@code action} unless the effect ran, was refused, or is being run for {@code key}. */
  public Outcome run(IdempotencyKey key, String effect, Policy policy, Effect action) {
    String id = Ledgers.recordId(key, effect);
    Optional<ClaimResult> known = settled.get(id, policy.fingerprint());
    if (known.isPresent()) {
      return answer(key, effect, known.get());
    }
    Settlement alongside = policy.alongside();
    String alongsideId = alongside == null ? null : Ledgers.recordId(alongside.key(), alongside.effect());
    ClaimResult claimed;
    boolean settledAlongside = false;
    // A settlement this instance knows was made needs no try: its create would fail, and cost a read to tell why.
    if (alongside == null || settled.get(alongsideId, null).isPresent()) {
      claimed = ledger.claim(key, effect, policy.claimOptions(maxAttempts));
    } else {
      SettledClaim both = ledger.claimAndSettle(key, effect, policy.claimOptions(maxAttempts), alongside);
      claimed = both.claim();
      settledAlongside = both.settled();
      if (settledAlongside) {
        settled.put(alongsideId, new ClaimResult.AlreadyDone(alongside.outcome(), 1, null), null, false);
      }
    }
    if (claimed instanceof ClaimResult.Acquired acquired) {
      return perform(acquired.claim(), policy, action, settledAlongside);
    }
    return answer(key, effect, remember(id, claimed));
  }

  /**
   * Records the effect done with {@code result} unless it was recorded before: one write, no read, no lease
   * ({@link Ledger#settle}) — for an effect that is its own record, with nothing to carry out. {@link Processed} when
   * this call recorded it (or completed a claim whose holder had died), {@link Duplicate} with the result recorded
   * first, {@link InFlight} while a holder of a claim is live, {@link Rejected} when it was refused.
   */
  public Outcome settle(IdempotencyKey key, String effect, Map<String, Object> result) {
    String id = Ledgers.recordId(key, effect);
    Optional<ClaimResult> known = settled.get(id, null);
    if (known.isPresent()) {
      return answer(key, effect, known.get());
    }
    Optional<ClaimResult> found = ledger.settle(key, effect, result);
    if (found.isEmpty()) {
      settled.put(id, new ClaimResult.AlreadyDone(result, 1, null), null, false);
      return new Processed(result, 1, Optional.empty());
    }
    if (found.get() instanceof ClaimResult.Acquired acquired) {
      return perform(acquired.claim(), Policy.DEFAULT, attempt -> Completion.of(result), false);
    }
    return answer(key, effect, remember(id, found.get()));
  }

  /** {@link #settle(IdempotencyKey, String, Map)} with a typed result, recorded as {@code codec} encodes it. */
  public <T> Outcome settle(IdempotencyKey key, String effect, ResultCodec<T> codec, T result) {
    return settle(key, effect, codec.encode(result));
  }

  /** Runs {@code action} on the claim an earlier completion took for it ({@link Processed#next()}). */
  public Outcome runHeld(Held held, Effect action) {
    return perform(held.claim(), Policy.DEFAULT, action, false);
  }

  /** What a refusal does to the claim it was thrown under (see {@link Refusal}). */
  private Outcome refused(Claim held, Policy policy, Refusal refusal) {
    String reason = refusal.getMessage();
    switch (refusal.kind()) {
      case PERMANENT -> {
        ledger.reject(held, reason, refusal.writes());
        settled.put(held.recordId(), new ClaimResult.AlreadyRejected(reason, false, policy.fingerprint()),
            policy.fingerprint(), policy.fingerprint() != null);
        return new Rejected(reason, true, false);
      }
      case DEFERRED -> {
        // Not performed, so not counted; the release commits the deferral's record. A failed release is a transient
        // failure like any other: the event comes again, and the lease runs out meanwhile.
        ledger.release(held, DEFERRED + reason, false, refusal.writes());
        return new Deferred(reason, held.attempts());
      }
      case IN_FLIGHT -> {
        // Not performed: released uncounted, and answered as a claim held elsewhere is (logged in flight, redelivered).
        ledger.release(held, reason, false, refusal.writes());
        return new InFlight(refusal.heldUntil(), held.attempts());
      }
      default -> throw releaseAndRethrow(held, refusal, false, refusal.writes());
    }
  }

  /** A final answer read from the ledger (with the record's own fingerprint) is remembered; nothing else is. */
  private ClaimResult remember(String id, ClaimResult result) {
    switch (result) {
      case ClaimResult.AlreadyDone done -> settled.put(id, result, done.fingerprint(), true);
      case ClaimResult.AlreadyRejected rejected -> settled.put(id, result, rejected.fingerprint(), true);
      default -> {
        // not final: never cached
      }
    }
    return result;
  }

  /** The outcome of a claim this delivery did not acquire. */
  private Outcome answer(IdempotencyKey key, String effect, ClaimResult notAcquired) {
    return switch (notAcquired) {
      case ClaimResult.Acquired acquired -> throw new IllegalArgumentException("an acquired claim is performed");
      case ClaimResult.Expired expired -> throw new IllegalArgumentException("an expired claim is taken over");
      case ClaimResult.AlreadyDone done -> new Duplicate(done.outcome(), done.attempts());
      case ClaimResult.AlreadyRejected rejected -> new Rejected(rejected.reason(), false, rejected.gaveUp());
      case ClaimResult.Busy busy -> new InFlight(busy.leaseExpiresAt(), busy.attempts());
      case ClaimResult.FingerprintMismatch mismatch -> conflict(key, effect, mismatch.stored(), mismatch.offered());
    };
  }

  private Outcome perform(Claim claim, Policy policy, Effect action, boolean settledAlongside) {
    if (claim.exhausted()) {
      return giveUp(claim, policy);
    }
    LeaseRenewal renewal = new LeaseRenewal(ledger, claim, log);
    LISTENERS.forEach(listener -> listener.claimed(claim.key(), claim.effect()));
    Completion completion;
    try {
      completion = action.perform(new Attempt(renewal, settledAlongside));
    } catch (Refusal refusal) {
      return refused(renewal.stop(), policy, refusal);
    } catch (Exception failure) {
      throw releaseAndRethrow(renewal.stop(), failure, true, SideWrites.NONE);
    } catch (Error error) {
      // Out of memory, a class that failed to load: no write is attempted, but the renewals stop, so the claim is
      // taken over within one lease instead of being renewed for as long as the instance lives.
      renewal.stop();
      throw error;
    }
    LISTENERS.forEach(listener -> listener.completing(claim.key(), claim.effect()));
    Claim held = renewal.stop();
    Optional<Held> next;
    try {
      next = ledger.complete(held, completion.result(), completion.writes(), policy.next()).map(Held::new);
    } catch (IllegalArgumentException unrecordable) {
      // The result itself cannot be stored (a value Firestore has no type for): every retry would repeat the
      // effect and fail the same way, so the effect is refused for good, with the reason, instead.
      String reason = "the result could not be recorded: " + describe(unrecordable);
      ledger.reject(held, reason, SideWrites.NONE);
      return new Rejected(reason, true, false);
    } catch (RuntimeException unanswered) {
      // A commit that failed may have been applied: its answer lost, or resent by the client and refused as a stale
      // write (LeaseLost). Find out before anything is retried.
      Optional<LedgerRecord> done = committedAnyway(held);
      if (done.isEmpty()) {
        throw unanswered instanceof LeaseLost lost ? lost : releaseAndRethrow(held, unanswered, true, SideWrites.NONE);
      }
      next = Optional.empty();
      releaseFollowing(held, done.get(), policy);
    }
    settled.put(held.recordId(),
        new ClaimResult.AlreadyDone(completion.result(), held.attempts(), policy.fingerprint()),
        policy.fingerprint(), policy.fingerprint() != null);
    LISTENERS.forEach(listener -> listener.completed(claim.key(), claim.effect()));
    return new Processed(completion.result(), held.attempts(), next);
  }

  /** The record when {@code held}'s completion is its (done, with this holder's token): only its commit can be. */
  private Optional<LedgerRecord> committedAnyway(Claim held) {
    try {
      return ledger.lookup(held.key(), held.effect())
          .filter(record -> record.state() == RecordState.DONE && record.token() == held.token());
    } catch (RuntimeException unreadable) {
      return Optional.empty();
    }
  }

  /**
   * The claim of the effect that follows, when the applied commit made it for this holder, is given up at once, so
   * this delivery claims it again now instead of every delivery waiting out its lease. Only that claim: one made in
   * the same commit was created at the commit's time, the completion's last write. A claim an earlier holder made
   * (the commit completed alone) or another delivery made since belongs to a live holder, and is left alone.
   */
  private void releaseFollowing(Claim held, LedgerRecord done, Policy policy) {
    if (policy.then() == null) {
      return;
    }
    try {
      Optional<LedgerRecord> following = ledger.lookup(held.key(), policy.then())
          .filter(record -> record.state() == RecordState.CLAIMED && record.token() == 1
              && record.createdAt() != null && record.createdAt().equals(done.updatedAt()));
      if (following.isPresent()) {
        ledger.forceRelease(held.key(), policy.then(), 1, "once",
            "the commit that claimed it applied but lost its answer; claimed again by the same delivery", true);
      }
    } catch (RuntimeException gone) {
      // Unreadable, or taken over meanwhile: the next effect is claimed as usual either way.
    }
  }

  /** The cap of tries that may have run was reached before this one: refused for good, with the caller's writes. */
  private Outcome giveUp(Claim claim, Policy policy) {
    String reason = GAVE_UP + claim.spent() + " tries that may have run"
        + (claim.lastError() == null ? "" : ": " + claim.lastError());
    ledger.reject(claim, reason, true, policy.onGiveUp().apply(reason));
    return new Rejected(reason, true, true);
  }

  private RuntimeException releaseAndRethrow(Claim claim, Exception failure, boolean mayHaveRun, SideWrites writes) {
    try {
      ledger.release(claim, describe(failure), mayHaveRun, writes);
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

  private Conflict conflict(IdempotencyKey key, String effect, String stored, String offered) {
    log.error("idempotency key reused with a different payload; the effect was not run",
        Map.of("keyHash", key.logHash(), "effect", effect, "storedFingerprint", String.valueOf(stored),
            "offeredFingerprint", String.valueOf(offered)));
    return new Conflict(stored, offered);
  }
}
