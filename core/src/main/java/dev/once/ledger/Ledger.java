package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One record per (key, effect), recording who may run the effect, every try at it, and whether it ran: what
 * {@code Once} calls. Its rules are written once, over a store ({@link dev.once.ledger.spi.RecordStore}, the contract a store
 * implements): {@link Ledgers#over} builds a ledger over any store; {@code FirestoreLedger} is the one to deploy,
 * once-testing's {@code InMemoryLedger} has the same rules in memory (its {@code LedgerContract} runs against any
 * store). Implement this interface only to decorate a ledger ({@link ForwardingLedger}).
 */
public interface Ledger {
  /** The record as it is now (one read), or empty when the effect was never claimed. */
  Optional<LedgerRecord> lookup(IdempotencyKey key, String effect);

  /** Claims the effect for this delivery, recording the try, or says why not. */
  ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options);

  /** {@link #claim(IdempotencyKey, String, ClaimOptions)} with the defaults: no fingerprint, the configured lease. */
  default ClaimResult claim(IdempotencyKey key, String effect) {
    return claim(key, effect, ClaimOptions.DEFAULTS);
  }

  /** {@link #claim(IdempotencyKey, String, ClaimOptions)} with the configured lease, no cap. */
  default ClaimResult claim(IdempotencyKey key, String effect, String fingerprint) {
    return claim(key, effect, ClaimOptions.DEFAULTS.withFingerprint(fingerprint));
  }

  /**
   * Records the effect done with {@code outcome} when it was never claimed: one create, no read, no lease — for an
   * effect that is its own record, with nothing outside to carry out (a claim on a document's content naming the
   * first document). Empty when this call created the record (or its create, resent after its answer was lost, did);
   * otherwise what a {@link #claim} finds: the record's final answer, a live holder, a conflicting fingerprint, or an
   * expired claim taken over ({@link ClaimResult.Acquired}), which the caller completes with its outcome.
   */
  Optional<ClaimResult> settle(IdempotencyKey key, String effect, Map<String, Object> outcome);

  /**
   * {@link #claim} and {@link #settle} of {@code alongside} (another key's record, created done) in one commit: a
   * document's analysis claimed, and its content claimed naming that document, with one write call. When the claim's
   * record exists, nothing is created and the claim is judged as {@link #claim} judges it (a takeover included); when
   * only the settlement's exists, the claim is made alone. {@link SettledClaim#settled()} says whether this call (or
   * its create, resent after its answer was lost) created the settlement's record.
   */
  SettledClaim claimAndSettle(IdempotencyKey key, String effect, ClaimOptions options, Settlement alongside);

  /**
   * Extends the lease to {@code lease} from now (the store's time), only while {@code claim}'s holder holds it:
   * the claim as it now stands. Throws {@link LeaseLost}.
   */
  Claim renew(Claim claim, Duration lease);

  /**
   * Marks the effect done with its outcome, in one commit with {@code writes}; with {@code next}, claims that
   * effect for the same key in the same commit and returns its claim (empty when its record existed already: the
   * completion then commits alone). Throws {@link LeaseLost}.
   */
  Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next);

  default void complete(Claim claim, Map<String, Object> outcome, SideWrites writes) {
    complete(claim, outcome, writes, null);
  }

  /**
   * Refuses the effect for good, in one commit with {@code writes}; {@code gaveUp} when its cap of tries was reached
   * rather than for its input. Throws {@link LeaseLost}.
   */
  void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes);

  /** Refuses the effect for good, for its input. */
  default void reject(Claim claim, String reason, SideWrites writes) {
    reject(claim, reason, false, writes);
  }

  /**
   * Gives the lease up after a failure so the next delivery can retry at once, recording the try as failed (it may
   * have carried the effect out) or, when {@code mayHaveRun} is false, as not performed (it does not count against
   * a cap), in one commit with {@code writes}.
   */
  void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes);

  default void release(Claim claim, String error) {
    release(claim, error, true, SideWrites.NONE);
  }

  /**
   * An operator gives up the claim held with {@code token} (one read first tells the token): its lease ends now, so
   * the next delivery takes it over, and the record says who released it, when and why. The token moves on, so the
   * holder it released can neither renew nor complete the claim: a race with the holder has one winner. Throws
   * {@link LeaseLost} when that token no longer holds a claim (taken over, or finished) and, unless
   * {@code evenIfLive}, when the lease is live by the store's clock (its holder renewed it since it was read).
   */
  void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason, boolean evenIfLive);

  /**
   * An operator's deliberate re-run of a finished effect: when the record of (key, effect) is done or rejected in
   * {@code generation}, it keeps how that run ended in its history, with who invalidated it, when (the store's time)
   * and why, and becomes a claim of generation {@code generation + 1} with no try and its lease over, so the next
   * delivery takes it over and runs the effect once more ({@code Attempt.generation()} tells it which run it is).
   * False, writing nothing, when the record is not finished in that generation: absent, claimed (live or waiting for
   * a redelivery), or invalidated or run again since it was read.
   */
  boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason);

  /**
   * Documents beside the records (a budget's counters), read together in one call, by id: the fields of those that
   * exist, with server times as {@link Instant}s. Not fenced by any claim.
   */
  Map<String, Map<String, Object>> read(String collection, List<String> ids);

  /**
   * The sums of whole-number {@code fields} over documents beside the records (a day's budget counters), in one read —
   * on Firestore one aggregation, billed one read, not one per document. The documents are named two ways that must
   * agree: by id (at most 30), and as those of the collection whose {@code field} equals {@code value} and that hold
   * every summed field; a store that reads by id reads the ids, one that queries an index (Firestore) asks for the
   * others. A missing document, one lacking a summed field, or one whose {@code field} is not {@code value} adds
   * nothing. Not fenced by any claim.
   */
  Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields);

  /**
   * Commits {@code writes} to documents beside the records, alone and atomically, outside any claim (a budget's
   * reservation, an increment). Not fenced: only for writes that are right whoever makes them.
   */
  void commit(SideWrites writes);

  /** The store's time as this instance best tells it (asking the store once if this instance never did). */
  Instant now();
}
