package dev.once.ledger;

import dev.once.internal.config.Lazy;
import dev.once.internal.ledger.Claim;
import dev.once.internal.ledger.ClaimOptions;
import dev.once.internal.ledger.ClaimResult;
import dev.once.internal.ledger.LedgerRecord;
import dev.once.internal.ledger.NextClaim;
import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/** {@link Ledger#lazy}: the ledger is built once, by the first call, however many calls arrive at once. */
final class LazyLedger implements Ledger {
  private final Lazy<Ledger> ledger;

  LazyLedger(Supplier<? extends Ledger> factory) {
    this.ledger = Lazy.of(factory::get);
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    return ledger.get().lookup(key, effect);
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    return ledger.get().claim(key, effect, options);
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    return ledger.get().renew(claim, lease);
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    return ledger.get().complete(claim, outcome, writes, next);
  }

  @Override
  public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
    return ledger.get().invalidate(key, effect, generation, by, reason);
  }

  @Override
  public void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes) {
    ledger.get().reject(claim, reason, gaveUp, writes);
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    ledger.get().release(claim, error, mayHaveRun, writes);
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    ledger.get().forceRelease(key, effect, token, by, reason, evenIfLive);
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, java.util.List<String> ids) {
    return ledger.get().read(collection, ids);
  }

  @Override
  public void commit(SideWrites writes) {
    ledger.get().commit(writes);
  }

  @Override
  public Instant now() {
    return ledger.get().now();
  }
}
