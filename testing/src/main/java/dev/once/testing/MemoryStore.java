package dev.once.testing;

import dev.once.ledger.DocumentWrites;
import dev.once.ledger.DocumentWrites.Increment;
import dev.once.ledger.DocumentWrites.Special;
import dev.once.ledger.SideWrites;
import dev.once.ledger.spi.RecordStore;
import dev.once.ledger.spi.RecordStore.Refused.Why;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The store contract ({@link RecordStore}) in memory: records and documents shared by the {@link InMemoryLedger}s of
 * one "database"; its monitor is the lock of every operation, so a transaction is its body run under it. Times come
 * from the given clock, as Firestore's do: a read never earlier than the last write, update times strictly
 * increasing. Values Firestore cannot hold are refused as Firestore's client refuses them.
 */
public final class MemoryStore implements RecordStore {
  private final InstantSource clock;
  private final Map<String, Stored> records = new HashMap<>();
  private final Map<String, Map<String, Map<String, Object>>> documents = new HashMap<>();
  private Instant lastWrite = Instant.EPOCH;

  /** A record as the store holds it. */
  private record Stored(Map<String, Object> fields, Instant updateTime) {}

  public MemoryStore(InstantSource clock) {
    this.clock = clock;
  }

  @Override
  public synchronized Snapshot read(String id) {
    Stored stored = records.get(id);
    return stored == null
        ? new Snapshot(id, null, null, readTime())
        : new Snapshot(id, frozen(stored.fields()), stored.updateTime(), readTime());
  }

  @Override
  public synchronized Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    Map<String, Map<String, Object>> found = new LinkedHashMap<>();
    Map<String, Map<String, Object>> docs = documents.getOrDefault(collection, Map.of());
    for (String id : ids) {
      if (docs.containsKey(id)) {
        found.put(id, frozen(docs.get(id)));
      }
    }
    return found;
  }

  /**
   * Checks every value and precondition, then applies the side writes — staged on copies, so a failing write leaves every
   * document as it was — and the records, at one commit time.
   */
  @Override
  public synchronized List<Instant> commit(List<RecordWrite> writes, SideWrites sideWrites) {
    // As Firestore's client, a value it cannot hold is refused before anything is sent.
    writes.forEach(write -> storable(write.fields()));
    writes.forEach(this::refuseUnless);
    Instant now = clock.instant();
    Map<String, Map<String, Map<String, Object>>> staged = new HashMap<>();
    documents.forEach((collection, docs) -> staged.put(collection, new HashMap<>(docs)));
    sideWrites.addTo(new StagedWrites(staged, now));
    staged.forEach((collection, docs) -> docs.forEach((id, fields) -> {
      if (fields != documents.getOrDefault(collection, Map.of()).get(id)) {
        fitsADocument(collection, id, fields);
      }
    }));
    Instant at = writeTime(now);
    Map<String, Map<String, Object>> written = new LinkedHashMap<>();
    for (RecordWrite write : writes) {
      Stored old = records.get(write.id());
      Map<String, Object> fields = new LinkedHashMap<>(old == null ? Map.of() : old.fields());
      // An update replaces the fields it names, whole (nested maps too), as Firestore's does.
      write.fields().forEach((name, value) -> fields.put(name, resolve(value, null, at)));
      fitsADocument("records", write.id(), fields);
      written.put(write.id(), fields);
    }
    List<Instant> times = new ArrayList<>();
    written.forEach((id, fields) -> {
      records.put(id, new Stored(fields, at));
      times.add(at);
    });
    documents.clear();
    documents.putAll(staged);
    return times;
  }

  /**
   * Refuses a document over Firestore's 1 MiB as the server does: the whole commit fails with INVALID_ARGUMENT, an
   * error of the call (not of the value, which the client would refuse before sending), so the guard takes it as a
   * failure that may be retried — and a writer that retries for ever is seen here.
   */
  private static void fitsADocument(String collection, String id, Map<String, Object> fields) {
    long size = FirestoreSizes.of(collection, id, fields);
    if (size > FirestoreSizes.MAX_DOCUMENT_BYTES) {
      throw new IllegalStateException("INVALID_ARGUMENT: maximum entity size is " + FirestoreSizes.MAX_DOCUMENT_BYTES
          + " bytes (" + collection + "/" + id + " would be " + size + ")");
    }
  }

  private void refuseUnless(RecordWrite write) {
    Stored stored = records.get(write.id());
    boolean holds = switch (write.precondition()) {
      case Precondition.Absent absent -> stored == null;
      case Precondition.UpdatedAt at -> stored != null && stored.updateTime().equals(at.time());
      // Under the store's lock nothing changes between a transaction's read and its writes.
      case Precondition.AsRead asRead -> stored != null;
    };
    if (!holds) {
      throw stored != null && write.precondition() instanceof Precondition.Absent
          ? new Refused(Why.EXISTS, new IllegalStateException("ALREADY_EXISTS: record " + write.id() + " exists"))
          : new Refused(Why.STALE, new IllegalStateException("FAILED_PRECONDITION: record " + write.id()));
    }
  }

  @Override
  public synchronized <T> T transact(String id, Function<Snapshot, Decision<T>> body) {
    Decision<T> decision = body.apply(read(id));
    if (!decision.records().isEmpty() || decision.writes() != SideWrites.NONE) {
      commit(decision.records(), decision.writes());
    }
    return decision.result();
  }

  @Override
  public synchronized Optional<Instant> time() {
    return Optional.of(readTime());
  }

  /** A read sees every write before it, as Firestore's read times do: never earlier than the last write. */
  private Instant readTime() {
    Instant now = clock.instant();
    return now.isAfter(lastWrite) ? now : lastWrite;
  }

  /** Strictly increasing write times, as the store's update times are. */
  private Instant writeTime(Instant now) {
    lastWrite = now.isAfter(lastWrite) ? now : lastWrite.plusNanos(1000);
    return lastWrite;
  }

  public synchronized Optional<Map<String, Object>> document(String collection, String id) {
    return Optional.ofNullable(documents.getOrDefault(collection, Map.of()).get(id)).map(MemoryStore::copy);
  }

  public synchronized Map<String, Map<String, Object>> documentsOf(String collection) {
    Map<String, Map<String, Object>> all = new LinkedHashMap<>();
    documents.getOrDefault(collection, Map.of()).forEach((id, fields) -> all.put(id, copy(fields)));
    return Collections.unmodifiableMap(all);
  }

  public synchronized void put(String collection, String id, Map<String, Object> fields) {
    documents.computeIfAbsent(collection, c -> new HashMap<>()).put(id, copy(fields));
  }

  /** An unmodifiable copy; Firestore fields may hold null, which {@code Map.copyOf} refuses. */
  private static Map<String, Object> copy(Map<String, Object> fields) {
    return Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  /**
   * Firestore's own timestamp type, known by name: the kit does not depend on google-cloud-core, and a function that
   * stores one has it on its class path.
   */
  private static final String FIRESTORE_TIMESTAMP = "com.google.cloud.Timestamp";

  /**
   * A record's or a document's fields as a reader gets them: nothing in them reaches back into the store, and every
   * time an Instant, at any depth, as the Firestore store gives them (Firestore reads a stored Date as its Timestamp).
   */
  @SuppressWarnings("unchecked")
  private static <T> T frozen(T value) {
    if (value instanceof Date date) {
      return (T) date.toInstant();
    }
    if (value != null && value.getClass().getName().equals(FIRESTORE_TIMESTAMP)) {
      try {
        long seconds = (long) value.getClass().getMethod("getSeconds").invoke(value);
        int nanos = (int) value.getClass().getMethod("getNanos").invoke(value);
        return (T) Instant.ofEpochSecond(seconds, nanos);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot read the time of " + value, e);
      }
    }
    if (value instanceof Map<?, ?> map) {
      Map<Object, Object> copy = new LinkedHashMap<>();
      map.forEach((name, inner) -> copy.put(name, frozen(inner)));
      return (T) Collections.unmodifiableMap(copy);
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>();
      list.forEach(item -> copy.add(frozen(item)));
      return (T) Collections.unmodifiableList(copy);
    }
    return value;
  }

  /**
   * Refuses, as Firestore's client does, a value Firestore has no type for (a BigInteger, say; it takes a BigDecimal
   * as its decimal type).
   */
  private static void storable(Object value) {
    if (value == null || value instanceof String || value instanceof Boolean || value instanceof Long
        || value instanceof Integer || value instanceof Short || value instanceof Byte || value instanceof Double
        || value instanceof Float || value instanceof BigDecimal || value instanceof Instant
        || value.getClass().getName().equals(FIRESTORE_TIMESTAMP) || value instanceof Date || value instanceof byte[]
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
      list.forEach(MemoryStore::storable);
      return;
    }
    throw new IllegalArgumentException("Cannot store a " + value.getClass().getName() + " in Firestore: " + value);
  }

  /**
   * {@code value} written over {@code old}: nested maps field by field (a merge: {@code old} is what was there; a
   * replacing write passes null), the store's own values resolved at {@code now}.
   */
  @SuppressWarnings("unchecked")
  private static Object resolve(Object value, Object old, Instant now) {
    if (value == Special.SERVER_TIME) {
      return now;
    }
    if (value instanceof Increment increment) {
      return (old instanceof Number n ? n.longValue() : 0L) + increment.amount();
    }
    if (value instanceof Map<?, ?> map) {
      return resolveAll((Map<String, Object>) map, old instanceof Map<?, ?> oldMap
          ? (Map<String, Object>) oldMap : Map.of(), now);
    }
    if (value instanceof List<?> list) {
      return new ArrayList<>(list);
    }
    return value;
  }

  /** {@code fields} written over {@code base}: nested maps field by field, sentinels resolved. */
  private static Map<String, Object> resolveAll(Map<String, Object> fields, Map<String, Object> base, Instant now) {
    Map<String, Object> result = new LinkedHashMap<>(base);
    fields.forEach((name, value) -> result.put(name, resolve(value, base.get(name), now)));
    return result;
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
      docs(collection).put(id, resolveAll(fields, Map.of(), now));
    }

    @Override
    public void merge(String collection, String id, Map<String, Object> fields) {
      storable(fields);
      docs(collection).put(id, resolveAll(fields, docs(collection).getOrDefault(id, Map.of()), now));
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
  }
}
