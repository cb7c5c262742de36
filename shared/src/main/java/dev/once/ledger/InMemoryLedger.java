package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites.Increment;
import dev.once.ledger.DocumentWrites.Special;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A ledger in memory, with {@link FirestoreLedger}'s semantics — one record per (key, effect), leases judged by the
 * store's clock, fencing by update time or token, side writes in the same atomic commit — for the unit tests of
 * functions that use the library. The same contract tests run against both. Its clock is the store's ("server")
 * clock: tests move time by passing one they control. Not for production: nothing is shared between instances.
 */
public final class InMemoryLedger implements Ledger {
  private final LedgerConfig config;
  private final InstantSource clock;
  private final Store store;

  public InMemoryLedger() {
    this(LedgerConfig.defaults(), InstantSource.system());
  }

  /** @param clock the store's ("server") clock, by which leases are judged */
  public InMemoryLedger(LedgerConfig config, InstantSource clock) {
    this(config, clock, new Store());
  }

  private InMemoryLedger(LedgerConfig config, InstantSource clock, Store store) {
    this.config = config;
    this.clock = clock;
    this.store = store;
  }

  /** Another instance's ledger over the same store, configured otherwise (a shorter lease, say). */
  public InMemoryLedger withConfig(LedgerConfig other) {
    return new InMemoryLedger(other, clock, store);
  }

  /** What the instances of one "database" share. */
  private static final class Store {
    final Map<String, Stored> records = new HashMap<>();
    final Map<String, Map<String, Map<String, Object>>> documents = new HashMap<>();
    Instant lastWrite = Instant.EPOCH;
  }

  /** A record as the store holds it. */
  private static final class Stored {
    String key;
    String effect;
    RecordState state;
    long token;
    int attempts;
    Instant leaseExpiresAt;
    Instant expireAt;
    String fingerprint;
    String error;
    Map<String, Object> outcome = Map.of();
    Instant createdAt;
    Instant updatedAt;
    String releasedBy;
    Instant releasedAt;
    String releaseReason;
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    String id = FirestoreLedger.recordId(key, effect);
    synchronized (store) {
      return Optional.ofNullable(store.records.get(id)).map(s -> toRecord(id, s, readTime()));
    }
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, String fingerprint) {
    String id = FirestoreLedger.recordId(key, effect);
    synchronized (store) {
      return claim(id, key, effect, fingerprint);
    }
  }

  private ClaimResult claim(String id, IdempotencyKey key, String effect, String fingerprint) {
    Instant now = clock.instant();
    Stored stored = store.records.get(id);
    if (stored == null) {
      stored = new Stored();
      stored.key = key.value();
      stored.effect = effect;
      stored.state = RecordState.CLAIMED;
      stored.token = 1;
      stored.attempts = 1;
      stored.leaseExpiresAt = now.plus(config.lease());
      stored.expireAt = now.plus(config.retention());
      stored.fingerprint = fingerprint;
      stored.createdAt = now;
      stored.updatedAt = writeTime(now);
      store.records.put(id, stored);
      return new ClaimResult.Acquired(new Claim(key, effect, id, 1, 1, stored.leaseExpiresAt, stored.updatedAt));
    }
    ClaimResult settled = ClaimResult.settled(toRecord(id, stored, readTime()), fingerprint);
    if (!(settled instanceof ClaimResult.Expired)) {
      return settled;
    }
    stored.token++;
    stored.attempts++;
    stored.leaseExpiresAt = now.plus(config.lease());
    stored.expireAt = now.plus(config.retention());
    if (stored.fingerprint == null) {
      stored.fingerprint = fingerprint;
    }
    stored.updatedAt = writeTime(now);
    // As in Firestore, a takeover is fenced by its token: its transaction does not report a write time.
    return new ClaimResult.Acquired(
        new Claim(key, effect, id, stored.token, stored.attempts, stored.leaseExpiresAt, null));
  }

  @Override
  public void complete(Claim claim, Map<String, Object> outcome, SideWrites writes) {
    storable(outcome);
    finish(claim, "complete", writes, stored -> {
      stored.state = RecordState.DONE;
      stored.outcome = outcome == null ? Map.of() : copy(outcome);
    });
  }

  @Override
  public void reject(Claim claim, String reason, SideWrites writes) {
    finish(claim, "reject", writes, stored -> {
      stored.state = RecordState.REJECTED;
      stored.error = FirestoreLedger.truncate(reason);
    });
  }

  @Override
  public void release(Claim claim, String error) {
    synchronized (store) {
      Stored stored = held(claim, "release");
      Instant now = writeTime(clock.instant());
      stored.leaseExpiresAt = now;
      stored.error = FirestoreLedger.truncate(error);
      stored.updatedAt = now;
    }
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason) {
    Claim claim = new Claim(key, effect, FirestoreLedger.recordId(key, effect), token, 0, null, null);
    synchronized (store) {
      Stored stored = held(claim, "release");
      Instant now = writeTime(clock.instant());
      stored.leaseExpiresAt = now;
      stored.updatedAt = now;
      stored.releasedBy = by;
      stored.releasedAt = now;
      stored.releaseReason = FirestoreLedger.truncate(reason);
    }
  }

  private void finish(Claim claim, String action, SideWrites writes, Consumer<Stored> change) {
    synchronized (store) {
      Stored stored = held(claim, action);
      Instant now = clock.instant();
      // Staged on copies, so a failing write leaves the record and every document as they were.
      Map<String, Map<String, Map<String, Object>>> staged = new HashMap<>();
      store.documents.forEach((collection, docs) -> staged.put(collection, new HashMap<>(docs)));
      writes.addTo(new StagedWrites(staged, now));
      now = writeTime(now);
      store.documents.clear();
      store.documents.putAll(staged);
      change.accept(stored);
      stored.updatedAt = now;
      stored.expireAt = now.plus(config.retention());
    }
  }

  /** The record, while {@code claim}'s holder holds it; else {@link LeaseLost}. */
  private Stored held(Claim claim, String action) {
    Stored stored = store.records.get(claim.recordId());
    boolean holds = stored != null && (claim.writtenAt() != null
        ? claim.writtenAt().equals(stored.updatedAt)
        : stored.state == RecordState.CLAIMED && stored.token == claim.token());
    if (!holds) {
      throw FirestoreLedger.leaseLost(claim, action);
    }
    return stored;
  }

  /** A read sees every write before it, as Firestore's read times do: never earlier than the last write. */
  private Instant readTime() {
    Instant now = clock.instant();
    return now.isAfter(store.lastWrite) ? now : store.lastWrite;
  }

  /** Strictly increasing write times, as the store's update times are. */
  private Instant writeTime(Instant now) {
    store.lastWrite = now.isAfter(store.lastWrite) ? now : store.lastWrite.plusNanos(1000);
    return store.lastWrite;
  }

  /** A document written beside the records, as it stands (server times and increments resolved). */
  public Optional<Map<String, Object>> document(String collection, String id) {
    synchronized (store) {
      return Optional.ofNullable(store.documents.getOrDefault(collection, Map.of()).get(id)).map(InMemoryLedger::copy);
    }
  }

  /** Every document of a collection, by id. */
  public Map<String, Map<String, Object>> collection(String collection) {
    synchronized (store) {
      Map<String, Map<String, Object>> all = new LinkedHashMap<>();
      store.documents.getOrDefault(collection, Map.of()).forEach((id, fields) -> all.put(id, copy(fields)));
      return Collections.unmodifiableMap(all);
    }
  }

  /** Writes a document outside any commit, as another program would. */
  public void put(String collection, String id, Map<String, Object> fields) {
    synchronized (store) {
      store.documents.computeIfAbsent(collection, c -> new HashMap<>()).put(id, copy(fields));
    }
  }

  /** An unmodifiable copy; Firestore fields may hold null, which {@code Map.copyOf} refuses. */
  private static Map<String, Object> copy(Map<String, Object> fields) {
    return Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  /**
   * Refuses, as Firestore's client does, a value Firestore has no type for (a BigInteger, say; it takes a BigDecimal
   * as its decimal type).
   */
  private static void storable(Object value) {
    if (value == null || value instanceof String || value instanceof Boolean || value instanceof Long
        || value instanceof Integer || value instanceof Short || value instanceof Byte || value instanceof Double
        || value instanceof Float || value instanceof java.math.BigDecimal || value instanceof Instant || value instanceof com.google.cloud.Timestamp
        || value instanceof java.util.Date || value instanceof byte[] || value instanceof Special
        || value instanceof Increment) {
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.forEach((name, inner) -> {
        if (!(name instanceof String)) {
          throw new IllegalArgumentException("Firestore field names are strings, got " + name);
        }
        storable(inner);
      });
      return;
    }
    if (value instanceof List<?> list) {
      list.forEach(InMemoryLedger::storable);
      return;
    }
    throw new IllegalArgumentException("Cannot store a " + value.getClass().getName() + " in Firestore: " + value);
  }

  private static LedgerRecord toRecord(String id, Stored s, Instant readTime) {
    return new LedgerRecord(id, s.key, s.effect, s.state, s.token, s.attempts, s.leaseExpiresAt, s.expireAt,
        s.fingerprint, s.error, s.outcome, s.createdAt, s.updatedAt, readTime,
        s.releasedBy == null ? null : new LedgerRecord.Released(s.releasedBy, s.releasedAt, s.releaseReason));
  }

  /** Writes applied to a staged copy of the documents. */
  private static final class StagedWrites implements DocumentWrites {
    private final Map<String, Map<String, Map<String, Object>>> staged;
    private final Instant now;

    StagedWrites(Map<String, Map<String, Map<String, Object>>> staged, Instant now) {
      this.staged = staged;
      this.now = now;
    }

    @Override
    public void set(String collection, String id, Map<String, Object> fields) {
      storable(fields);
      docs(collection).put(id, resolve(fields, Map.of()));
    }

    @Override
    public void merge(String collection, String id, Map<String, Object> fields) {
      storable(fields);
      docs(collection).put(id, resolve(fields, docs(collection).getOrDefault(id, Map.of())));
    }

    @Override
    public void create(String collection, String id, Map<String, Object> fields) {
      if (docs(collection).containsKey(id)) {
        throw new IllegalStateException("ALREADY_EXISTS: " + collection + "/" + id + " exists");
      }
      set(collection, id, fields);
    }

    private Map<String, Map<String, Object>> docs(String collection) {
      return staged.computeIfAbsent(collection, c -> new HashMap<>());
    }

    /** {@code fields} written over {@code base}: nested maps field by field, sentinels resolved. */
    @SuppressWarnings("unchecked")
    private Map<String, Object> resolve(Map<String, Object> fields, Map<String, Object> base) {
      Map<String, Object> result = new LinkedHashMap<>(base);
      fields.forEach((name, value) -> {
        Object old = base.get(name);
        if (value == Special.SERVER_TIME) {
          result.put(name, now);
        } else if (value instanceof Increment increment) {
          result.put(name, (old instanceof Number n ? n.longValue() : 0L) + increment.amount());
        } else if (value instanceof Map<?, ?> map) {
          result.put(name, resolve((Map<String, Object>) map, old instanceof Map<?, ?> oldMap
              ? (Map<String, Object>) oldMap : Map.of()));
        } else if (value instanceof List<?> list) {
          result.put(name, new ArrayList<>(list));
        } else {
          result.put(name, value);
        }
      });
      return result;
    }
  }
}
