package dev.once.ledger;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A ledger record as read, for the pre-check and for operators ({@code dev/inspect}).
 *
 * @param readTime Firestore's time of the read: the clock a lease is judged against
 * @param released the last release by an operator, or null
 * @param calls the latest tries, oldest first (the record keeps the last few; {@code attempts} counts them all)
 * @param spent how many tries may have carried the effect out (all but those refused before anything happened)
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
    boolean gaveUp) {

  public LedgerRecord {
    calls = calls == null ? List.of() : List.copyOf(calls);
  }

  /** An operator's release of the claim: who, when, why (null when no operator released it). */
  public record Released(String by, Instant at, String reason) {}

  /** A claim whose holder may still be working: its lease runs past the read. */
  public boolean leaseLive() {
    return state == RecordState.CLAIMED && leaseExpiresAt != null && leaseExpiresAt.isAfter(readTime);
  }
}
