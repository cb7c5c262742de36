package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A ledger that hands every call to another one: the base of a decorator that changes one call (counts it, loses
 * its answer, fails it) and of the stores' own ledgers. Override what you change.
 */
public class ForwardingLedger implements Ledger {
  private final Supplier<? extends Ledger> delegate;

  protected ForwardingLedger(Ledger delegate) {
    this.delegate = () -> delegate;
  }

  /** Over the ledger {@code delegate} answers at each call (built on first use, say). */
  protected ForwardingLedger(Supplier<? extends Ledger> delegate) {
    this.delegate = delegate;
  }

  protected Ledger delegate() {
    return delegate.get();
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    return delegate().lookup(key, effect);
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    return delegate().claim(key, effect, options);
  }

  @Override
  public Optional<ClaimResult> settle(IdempotencyKey key, String effect, Map<String, Object> outcome) {
    return delegate().settle(key, effect, outcome);
  }

  @Override
  public SettledClaim claimAndSettle(IdempotencyKey key, String effect, ClaimOptions options, Settlement alongside) {
    return delegate().claimAndSettle(key, effect, options, alongside);
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    return delegate().renew(claim, lease);
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    return delegate().complete(claim, outcome, writes, next);
  }

  @Override
  public void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes) {
    delegate().reject(claim, reason, gaveUp, writes);
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    delegate().release(claim, error, mayHaveRun, writes);
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    delegate().forceRelease(key, effect, token, by, reason, evenIfLive);
  }

  @Override
  public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
    return delegate().invalidate(key, effect, generation, by, reason);
  }

  @Override
  public Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields) {
    return delegate().sum(collection, ids, field, value, fields);
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    return delegate().read(collection, ids);
  }

  @Override
  public void commit(SideWrites writes) {
    delegate().commit(writes);
  }

  @Override
  public Instant now() {
    return delegate().now();
  }
}
