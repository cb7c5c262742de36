package dev.once.ledger;

import dev.once.config.Lazy;
import dev.once.key.IdempotencyKey;
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
  public ClaimResult claim(IdempotencyKey key, String effect, String fingerprint) {
    return ledger.get().claim(key, effect, fingerprint);
  }

  @Override
  public void complete(Claim claim, Map<String, Object> outcome, SideWrites writes) {
    ledger.get().complete(claim, outcome, writes);
  }

  @Override
  public void reject(Claim claim, String reason, SideWrites writes) {
    ledger.get().reject(claim, reason, writes);
  }

  @Override
  public void release(Claim claim, String error) {
    ledger.get().release(claim, error);
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason) {
    ledger.get().forceRelease(key, effect, token, by, reason);
  }
}
