package dev.once.internal.ledger;

import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import java.time.Duration;

/**
 * How the ledger behaves; built once per instance.
 *
 * @param takeoverAttempts the transaction retry budget of a takeover. Each abort means another delivery's
 *     transaction on the same record committed first; once one has, every other contender reads a live lease
 *     and leaves without writing. So a budget of the number of deliveries that can contend for one record at
 *     once (instances × request concurrency that can hold the same key; a handful) never runs out; the default
 *     covers 16, the race test's thread count.
 * @param rpcTimeout the bound on every Firestore call the ledger waits for
 */
public record LedgerConfig(
    String collection, Duration lease, Duration retention, int takeoverAttempts, Duration rpcTimeout) {

  public static final int DEFAULT_TAKEOVER_ATTEMPTS = 16;
  public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofSeconds(30);

  public LedgerConfig {
    if (collection == null || collection.isBlank() || collection.contains("/")) {
      throw new IllegalArgumentException("ledger collection must be a plain collection id, got " + collection);
    }
    if (lease.isNegative() || lease.isZero() || retention.isNegative() || retention.isZero()) {
      throw new IllegalArgumentException("lease and retention must be positive");
    }
    if (takeoverAttempts < 1) {
      throw new IllegalArgumentException("takeoverAttempts must be at least 1");
    }
  }

  public static LedgerConfig fromSettings(Settings settings) {
    return new LedgerConfig(
        settings.required(OnceSetting.ONCE_COLLECTION),
        settings.seconds(OnceSetting.ONCE_LEASE_SECONDS),
        settings.days(OnceSetting.ONCE_RETENTION_DAYS),
        DEFAULT_TAKEOVER_ATTEMPTS,
        DEFAULT_RPC_TIMEOUT);
  }

  public static LedgerConfig defaults() {
    return fromSettings(Settings.of(java.util.Map.of()));
  }

  public LedgerConfig withLease(Duration newLease) {
    return new LedgerConfig(collection, newLease, retention, takeoverAttempts, rpcTimeout);
  }

  public LedgerConfig withCollection(String newCollection) {
    return new LedgerConfig(newCollection, lease, retention, takeoverAttempts, rpcTimeout);
  }
}
