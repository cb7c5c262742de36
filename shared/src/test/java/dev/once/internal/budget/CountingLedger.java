package dev.once.internal.budget;

import dev.once.internal.ledger.Claim;
import dev.once.internal.ledger.ClaimOptions;
import dev.once.internal.ledger.ClaimResult;
import dev.once.internal.ledger.LedgerRecord;
import dev.once.internal.ledger.NextClaim;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Delegates everything and counts the budget's calls; tests override the call they break or hold. */
class CountingLedger implements Ledger {
  private final Ledger inner;
  private final java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicInteger commits = new java.util.concurrent.atomic.AtomicInteger();

  CountingLedger(Ledger inner) {
    this.inner = inner;
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    reads.incrementAndGet();
    return inner.read(collection, ids);
  }

  @Override
  public void commit(SideWrites writes) {
    commits.incrementAndGet();
    inner.commit(writes);
  }

  int reads() {
    return reads.get();
  }

  int commits() {
    return commits.get();
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    return inner.lookup(key, effect);
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    return inner.claim(key, effect, options);
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    return inner.renew(claim, lease);
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    return inner.complete(claim, outcome, writes, next);
  }

  @Override
  public void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes) {
    inner.reject(claim, reason, gaveUp, writes);
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    inner.release(claim, error, mayHaveRun, writes);
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    inner.forceRelease(key, effect, token, by, reason, evenIfLive);
  }

  @Override
  public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
    return inner.invalidate(key, effect, generation, by, reason);
  }

  @Override
  public Instant now() {
    return inner.now();
  }
}
