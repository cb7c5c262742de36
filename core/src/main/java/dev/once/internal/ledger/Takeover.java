package dev.once.internal.ledger;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.LedgerRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What taking over an expired claim writes: the one rule both ledgers follow. The token and attempts go up; a try
 * its holder left running is marked abandoned (it may have carried the effect out, so it stays counted); the new
 * try is recorded before it is made — unless the cap of tries that may have run is reached, in which case the
 * claim is handed over exhausted, to be refused, and no try is recorded.
 */
record Takeover(long token, int attempts, int spent, List<Call> calls, boolean exhausted, String lastError,
    int generation) {
  /** The record keeps the latest tries only; {@code attempts} and {@code spent} count them all. */
  static final int CALLS_KEPT = 10;

  static Takeover of(LedgerRecord record, ClaimOptions options, Instant now) {
    List<Call> calls = new ArrayList<>(record.calls());
    int last = calls.size() - 1;
    if (last >= 0 && calls.get(last).outcome() == Call.Outcome.RUNNING) {
      calls.set(last,
          calls.get(last).ended(Call.Outcome.ABANDONED, "its holder stopped before it finished (its lease ran out)"));
    }
    int attempts = record.attempts() + 1;
    boolean exhausted = options.maxSpent() > 0 && record.spent() >= options.maxSpent();
    int spent = record.spent();
    if (!exhausted) {
      spent++;
      calls.add(new Call(attempts, now, Call.Outcome.RUNNING, null));
    }
    List<Call> kept = calls.subList(Math.max(0, calls.size() - CALLS_KEPT), calls.size());
    return new Takeover(record.token() + 1, attempts, spent, List.copyOf(kept), exhausted, record.error(),
        record.generation());
  }

  Claim claim(IdempotencyKey key, String effect, String recordId, Instant leaseExpiresAt, Instant writtenAt,
      Duration lease) {
    return new Claim(key, effect, recordId, token, attempts, leaseExpiresAt, writtenAt, lease, calls, spent, exhausted,
        lastError, generation);
  }
}
