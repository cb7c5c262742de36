package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites.Increment;
import dev.once.ledger.DocumentWrites.Special;
import java.time.Duration;
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
 * store's clock, fencing by update time or token, tries recorded before they run, side writes in the same atomic
 * commit, values Firestore cannot hold refused — for the unit tests of functions that use the library. The same
 * contract tests run against both. Its clock is the store's ("server") clock: tests move time by passing one they
 * control. Not for production: nothing is shared between instances.
 *
 * <p>What it cannot model: a write applied whose answer is lost. Every call here is answered, so nothing is resent —
 * no create resent that meets its own record, no transaction body run again, no increment applied twice — and it
 * keeps no {@code nonce}. The tests of those cases ({@code *Resend*}) run the real Firestore client against the
 * emulator with the answers lost on the wire; a test here can only throw after a call, as {@code OnceTest} does.
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

  /** What the instances of one "database" share; its monitor is the lock of every operation. */
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
    int spent;
    List<Call> calls = List.of();
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
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    String id = FirestoreLedger.recordId(key, effect);
    synchronized (store) {
      Stored stored = store.records.get(id);
      Duration lease = options.leaseOr(config.lease());
      if (stored == null) {
        Claim claim = create(id, key, effect, options);
        return new ClaimResult.Acquired(claim);
      }
      Instant now = readTime();
      LedgerRecord record = toRecord(id, stored, now);
      ClaimResult settled = ClaimResult.settled(record, options.fingerprint());
      if (!(settled instanceof ClaimResult.Expired)) {
        return settled;
      }
      Takeover takeover = Takeover.of(record, options, now);
      stored.token = takeover.token();
      stored.attempts = takeover.attempts();
      stored.spent = takeover.spent();
      stored.calls = takeover.calls();
      stored.leaseExpiresAt = now.plus(lease);
      stored.expireAt = now.plus(config.retention());
      if (stored.fingerprint == null) {
        stored.fingerprint = options.fingerprint();
      }
      stored.updatedAt = writeTime(clock.instant());
      // As in Firestore, a takeover is fenced by its token: its transaction does not report a write time.
      return new ClaimResult.Acquired(takeover.claim(key, effect, id, stored.leaseExpiresAt, null, lease));
    }
  }

  /** A new record, its creator's claim: token 1, its first try running. */
  private Claim create(String id, IdempotencyKey key, String effect, ClaimOptions options) {
    Instant now = readTime();
    Duration lease = options.leaseOr(config.lease());
    Stored stored = new Stored();
    stored.key = key.value();
    stored.effect = effect;
    stored.state = RecordState.CLAIMED;
    stored.token = 1;
    stored.attempts = 1;
    stored.spent = 1;
    stored.calls = List.of(new Call(1, now, Call.RUNNING, null));
    stored.leaseExpiresAt = now.plus(lease);
    stored.expireAt = now.plus(config.retention());
    stored.fingerprint = options.fingerprint();
    stored.createdAt = now;
    stored.updatedAt = writeTime(clock.instant());
    store.records.put(id, stored);
    return new Claim(key, effect, id, 1, 1, stored.leaseExpiresAt, stored.updatedAt, lease, stored.calls, 1, false,
        null);
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    synchronized (store) {
      Stored stored = held(claim, "renew");
      Instant leaseExpiresAt = readTime().plus(lease);
      stored.leaseExpiresAt = leaseExpiresAt;
      stored.updatedAt = writeTime(clock.instant());
      stored.expireAt = stored.updatedAt.plus(config.retention());
      return claim.renewed(leaseExpiresAt, claim.writtenAt() == null ? null : stored.updatedAt, lease);
    }
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    storable(outcome);
    synchronized (store) {
      String nextId = next == null ? null : FirestoreLedger.recordId(claim.key(), next.effect());
      boolean chain = next != null && !store.records.containsKey(nextId);
      finish(claim, "complete", writes, stored -> {
        stored.state = RecordState.DONE;
        stored.outcome = outcome == null ? Map.of() : copy(outcome);
        stored.calls = claim.callsEnded(Call.DONE, null);
      });
      if (!chain) {
        return Optional.empty();
      }
      Claim created = create(nextId, claim.key(), next.effect(), next.options());
      // One commit, one time, as in Firestore: the next claim is created when the completion is written.
      store.records.get(nextId).createdAt = store.records.get(claim.recordId()).updatedAt;
      return Optional.of(claim.writtenAt() == null ? created.renewed(created.leaseExpiresAt(), null, created.lease()) : created);
    }
  }

  @Override
  public void reject(Claim claim, String reason, SideWrites writes) {
    finish(claim, "reject", writes, stored -> {
      stored.state = RecordState.REJECTED;
      stored.error = FirestoreLedger.truncate(reason);
      stored.calls = claim.callsEnded(Call.REJECTED, FirestoreLedger.truncate(reason, 300));
    });
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    synchronized (store) {
      Stored stored = held(claim, "release");
      Instant now = apply(writes);
      stored.token = claim.token() + 1;
      stored.leaseExpiresAt = now;
      stored.error = FirestoreLedger.truncate(error);
      stored.calls = claim.callsEnded(mayHaveRun ? Call.FAILED : Call.NOT_PERFORMED, FirestoreLedger.truncate(error, 300));
      stored.spent = mayHaveRun || claim.exhausted() ? claim.spent() : claim.spent() - 1;
      stored.updatedAt = now;
      stored.expireAt = now.plus(config.retention());
    }
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    synchronized (store) {
      Stored stored = store.records.get(FirestoreLedger.recordId(key, effect));
      if (stored == null || stored.state != RecordState.CLAIMED || stored.token != token
          || !evenIfLive && stored.leaseExpiresAt.isAfter(readTime())) {
        throw FirestoreLedger.releaseRefused(key, effect, token, evenIfLive);
      }
      Instant now = writeTime(clock.instant());
      stored.token = token + 1;
      stored.leaseExpiresAt = now;
      stored.updatedAt = now;
      stored.expireAt = now.plus(config.retention());
      stored.releasedBy = by;
      stored.releasedAt = now;
      stored.releaseReason = FirestoreLedger.truncate(reason);
    }
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    synchronized (store) {
      Map<String, Map<String, Object>> found = new LinkedHashMap<>();
      Map<String, Map<String, Object>> documents = store.documents.getOrDefault(collection, Map.of());
      for (String id : ids) {
        if (documents.containsKey(id)) {
          found.put(id, copy(documents.get(id)));
        }
      }
      return found;
    }
  }

  @Override
  public void commit(SideWrites writes) {
    synchronized (store) {
      apply(writes);
    }
  }

  @Override
  public Instant now() {
    synchronized (store) {
      return readTime();
    }
  }

  private void finish(Claim claim, String action, SideWrites writes, Consumer<Stored> change) {
    synchronized (store) {
      Stored stored = held(claim, action);
      Instant now = apply(writes);
      change.accept(stored);
      stored.updatedAt = now;
      stored.expireAt = now.plus(config.retention());
    }
  }

  /**
   * Applies the side writes atomically — staged on copies, so a failing write leaves every document as it was —
   * and answers the commit's time.
   */
  private Instant apply(SideWrites writes) {
    Instant now = clock.instant();
    Map<String, Map<String, Map<String, Object>>> staged = new HashMap<>();
    store.documents.forEach((collection, docs) -> staged.put(collection, new HashMap<>(docs)));
    writes.addTo(new StagedWrites(staged, now));
    store.documents.clear();
    store.documents.putAll(staged);
    return writeTime(now);
  }

  /** The record, while {@code claim}'s holder holds it; else {@link LeaseLost}. */
  private Stored held(Claim claim, String action) {
    Stored stored = store.records.get(claim.recordId());
    // As Firestore's fence: the write time first, then the token (the holder's own lost-answer write moves the former).
    boolean holds = stored != null && (claim.writtenAt() != null && claim.writtenAt().equals(stored.updatedAt)
        || stored.state == RecordState.CLAIMED && stored.token == claim.token());
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
        || value instanceof Float || value instanceof java.math.BigDecimal || value instanceof Instant
        || value instanceof com.google.cloud.Timestamp || value instanceof java.util.Date || value instanceof byte[]
        || value instanceof Special || value instanceof Increment) {
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
        s.releasedBy == null ? null : new LedgerRecord.Released(s.releasedBy, s.releasedAt, s.releaseReason),
        s.calls, s.spent);
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
