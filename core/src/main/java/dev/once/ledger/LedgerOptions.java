package dev.once.ledger;

import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import java.time.Duration;
import java.util.Map;

/**
 * How a ledger behaves, built once per instance: {@link #defaults()} or {@link #fromSettings}, then changed by name
 * ({@code LedgerOptions.defaults().withLease(Duration.ofSeconds(5))}), never by position.
 */
public final class LedgerOptions {
  /**
   * The transaction retry budget of a takeover. Each abort means another delivery's transaction on the same record
   * committed first; once one has, every other contender reads a live lease and leaves without writing. So a budget
   * of the number of deliveries that can contend for one record at once (instances × request concurrency that can
   * hold the same key; a handful) never runs out; the default covers 16, the race test's thread count.
   */
  public static final int DEFAULT_TAKEOVER_ATTEMPTS = 16;
  public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofSeconds(30);

  private final String collection;
  private final Duration lease;
  private final Duration retention;
  private final int takeoverAttempts;
  private final Duration rpcTimeout;

  private LedgerOptions(String collection, Duration lease, Duration retention, int takeoverAttempts,
      Duration rpcTimeout) {
    if (collection == null || collection.isBlank() || collection.contains("/")) {
      throw new IllegalArgumentException("ledger collection must be a plain collection id, got " + collection);
    }
    if (lease.isNegative() || lease.isZero() || retention.isNegative() || retention.isZero()) {
      throw new IllegalArgumentException("lease and retention must be positive");
    }
    if (takeoverAttempts < 1) {
      throw new IllegalArgumentException("takeoverAttempts must be at least 1");
    }
    if (rpcTimeout.isNegative() || rpcTimeout.isZero()) {
      throw new IllegalArgumentException("rpcTimeout must be positive");
    }
    this.collection = collection;
    this.lease = lease;
    this.retention = retention;
    this.takeoverAttempts = takeoverAttempts;
    this.rpcTimeout = rpcTimeout;
  }

  /** ONCE_COLLECTION, ONCE_LEASE_SECONDS and ONCE_RETENTION_DAYS; an unusable value fails naming its variable. */
  public static LedgerOptions fromSettings(Settings settings) {
    return new LedgerOptions(
        settings.required(OnceSetting.ONCE_COLLECTION),
        settings.seconds(OnceSetting.ONCE_LEASE_SECONDS),
        settings.days(OnceSetting.ONCE_RETENTION_DAYS),
        DEFAULT_TAKEOVER_ATTEMPTS,
        DEFAULT_RPC_TIMEOUT);
  }

  /** The settings' defaults: collection {@code idempotency}, a 60 s lease, 30 days' retention. */
  public static LedgerOptions defaults() {
    return fromSettings(Settings.of(Map.of()));
  }

  /** The Firestore collection (or the store's equivalent) of the records. */
  public String collection() {
    return collection;
  }

  /** A claim's lease, renewed every third of it while its holder works. */
  public Duration lease() {
    return lease;
  }

  /** How long a record is kept after its last write (its TTL). */
  public Duration retention() {
    return retention;
  }

  public int takeoverAttempts() {
    return takeoverAttempts;
  }

  /** The bound on every store call the ledger waits for. */
  public Duration rpcTimeout() {
    return rpcTimeout;
  }

  public LedgerOptions withCollection(String value) {
    return new LedgerOptions(value, lease, retention, takeoverAttempts, rpcTimeout);
  }

  public LedgerOptions withLease(Duration value) {
    return new LedgerOptions(collection, value, retention, takeoverAttempts, rpcTimeout);
  }

  public LedgerOptions withRetention(Duration value) {
    return new LedgerOptions(collection, lease, value, takeoverAttempts, rpcTimeout);
  }

  public LedgerOptions withTakeoverAttempts(int value) {
    return new LedgerOptions(collection, lease, retention, value, rpcTimeout);
  }

  public LedgerOptions withRpcTimeout(Duration value) {
    return new LedgerOptions(collection, lease, retention, takeoverAttempts, value);
  }

  @Override
  public String toString() {
    return "LedgerOptions[collection=" + collection + ", lease=" + lease + ", retention=" + retention
        + ", takeoverAttempts=" + takeoverAttempts + ", rpcTimeout=" + rpcTimeout + "]";
  }
}
