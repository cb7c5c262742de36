package dev.once.ledger;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A ledger record as read, for the pre-check and for operators ({@code dev/inspect}).
 *
 * @param readTime Firestore's time of the read: the clock a lease is judged against
 * @param released the last release by an operator, or null
 * @param calls the latest tries, oldest first (the record keeps the last few; {@code attempts} counts them all)
 * @param spent how many tries may have carried the effect out (all but those refused before anything happened)
 * @param generation which run of the effect the record is about: 1, or more after an operator invalidated the earlier
 *     runs on purpose ({@link Ledger#invalidate})
 * @param history the earlier runs an operator invalidated, oldest first (the latest few)
 */
public record LedgerRecord(
    String recordId,
    String key,
    String effect,
    RecordState state,
    long token,
    int attempts,
    Instant leaseExpiresAt,
    Instant expireAt,
    String fingerprint,
    String error,
    Map<String, Object> outcome,
    Instant createdAt,
    Instant updatedAt,
    Instant readTime,
    Released released,
    List<Call> calls,
    int spent,
    boolean gaveUp,
    int generation,
    List<Invalidated> history) {

  public LedgerRecord {
    calls = calls == null ? List.of() : List.copyOf(calls);
    history = history == null ? List.of() : List.copyOf(history);
  }

  /** A record of its first run, never invalidated. */
  public LedgerRecord(String recordId, String key, String effect, RecordState state, long token, int attempts,
      Instant leaseExpiresAt, Instant expireAt, String fingerprint, String error, Map<String, Object> outcome,
      Instant createdAt, Instant updatedAt, Instant readTime, Released released, List<Call> calls, int spent,
      boolean gaveUp) {
    this(recordId, key, effect, state, token, attempts, leaseExpiresAt, expireAt, fingerprint, error, outcome,
        createdAt, updatedAt, readTime, released, calls, spent, gaveUp, 1, List.of());
  }

  /**
   * An earlier run an operator invalidated: how it had ended (its state, outcome or refusal, tries) and who
   * invalidated it, when (the store's time) and why.
   */
  public record Invalidated(int generation, RecordState state, Map<String, Object> outcome, String error,
      int attempts, Instant finishedAt, String by, Instant at, String reason) {}

  /** Invalidated on purpose and not run again yet: the next delivery takes it over and runs the effect once more. */
  public boolean awaitingRerun() {
    return state == RecordState.CLAIMED && !history.isEmpty() && calls.isEmpty();
  }

  /** An operator's release of the claim: who, when, why (null when no operator released it). */
  public record Released(String by, Instant at, String reason) {}

  /** A done record's result, decoded by {@code codec} (empty: the record is not done). */
  public <T> Optional<T> outcome(ResultCodec<T> codec) {
    return state == RecordState.DONE && outcome != null ? Optional.of(codec.decode(outcome))
        : Optional.empty();
  }

  /** A claim whose holder may still be working: its lease runs past the read. */
  public boolean leaseLive() {
    return state == RecordState.CLAIMED && leaseExpiresAt != null && leaseExpiresAt.isAfter(readTime);
  }
}
