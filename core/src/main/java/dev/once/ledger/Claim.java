package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The right, held by one delivery, to run one effect for one key until {@code leaseExpiresAt}.
 *
 * @param token the fencing counter: a takeover increments it, so a stale holder can be told apart
 * @param attempts how many deliveries have held this claim, this one included
 * @param writtenAt the store's update time of the claim as this holder last wrote it; finishing is conditional on
 *     it (one write, no read). Null after a takeover, whose transaction does not report its commit time: finishing
 *     then checks {@code token} inside a transaction instead.
 * @param lease the lease this claim is held with (renewals extend it by as much)
 * @param calls the tries recorded so far, this one last (unless {@code exhausted}); the record keeps the latest few
 * @param spent how many tries, this one included, may have carried the effect out
 * @param exhausted the cap of tries was reached before this one: the effect must not run; the caller refuses it
 * @param lastError the last failure recorded, for the refusal's reason
 * @param generation which run of the effect this claim is for: 1, or more after an operator invalidated the earlier
 */
public record Claim(
    IdempotencyKey key,
    String effect,
    String recordId,
    long token,
    int attempts,
    Instant leaseExpiresAt,
    Instant writtenAt,
    Duration lease,
    List<Call> calls,
    int spent,
    boolean exhausted,
    String lastError,
    int generation) {

  public Claim {
    calls = List.copyOf(calls);
  }

  /** A claim of an effect's first run. */
  public Claim(IdempotencyKey key, String effect, String recordId, long token, int attempts, Instant leaseExpiresAt,
      Instant writtenAt, Duration lease, List<Call> calls, int spent, boolean exhausted, String lastError) {
    this(key, effect, recordId, token, attempts, leaseExpiresAt, writtenAt, lease, calls, spent, exhausted, lastError,
        1);
  }

  /** The same claim, its lease extended and (when the write reported one) its new update time. */
  public Claim renewed(Instant newLeaseExpiresAt, Instant newWrittenAt, Duration newLease) {
    return new Claim(key, effect, recordId, token, attempts, newLeaseExpiresAt, newWrittenAt, newLease, calls, spent,
        exhausted, lastError, generation);
  }

  /** The calls with this try's entry ended as {@code how}; unchanged when this claim made no try (exhausted). */
  public List<Call> callsEnded(Call.Outcome how, String why) {
    if (exhausted || calls.isEmpty()) {
      return calls;
    }
    List<Call> ended = new ArrayList<>(calls);
    ended.set(ended.size() - 1, calls.get(calls.size() - 1).ended(how, why));
    return List.copyOf(ended);
  }
}
