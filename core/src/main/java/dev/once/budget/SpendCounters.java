package dev.once.budget;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The day's spend counters, and the only code that knows their layout: {@value #SHARDS} documents per day in the
 * {@value #COLLECTION} collection, {@code DAY_NN} (the day in ISO form, the counter's number), each holding
 * {@code spentMicroUsd} and {@code reservedMicroUsd}, changed only by atomic increments. Firestore sustains about one
 * write a second on one document; a call writes its counter twice (reserve, settle), and calls spread over the counters
 * by their key, so the day takes about {@value #SHARDS} / 2 calls a second sustained, and bursts far beyond. Reading the
 * day is one call for all of them, an aggregation (one read billed). Also what an operator's tool reads. A commit
 * outside the ledger's fenced ones (a reservation, its step-back) creates a marker beside the counters
 * ({@link #commitOnce}), so that, resent by the store's client after its answer was lost, it is not added twice.
 */
public final class SpendCounters {
  public static final String COLLECTION = "budget";
  public static final int SHARDS = 16;
  public static final String DAY = "day";
  public static final String SPENT = "spentMicroUsd";
  public static final String RESERVED = "reservedMicroUsd";
  public static final String UPDATED_AT = "updatedAt";
  /** A marker's expiry, the field of the collection's TTL policy (terraform/firestore.tf); counters have none. */
  public static final String EXPIRE_AT = "expireAt";
  /**
   * How long a marker is kept: it only has to outlive the client's resends of its commit (within the call's
   * deadline, seconds), and the TTL service deletes it within a day or so after this.
   */
  static final Duration MARKER_RETENTION = Duration.ofDays(1);

  private final Ledger ledger;

  public SpendCounters(Ledger ledger) {
    this.ledger = ledger;
  }

  /** Today in {@code zone}, by the store's clock (never this instance's). */
  public LocalDate today(ZoneId zone) {
    return LocalDate.ofInstant(ledger.now(), zone);
  }

  /** The day's spend: its counters summed in one read ({@link Ledger#sum}: on Firestore one billed read, not 16). */
  public DaySpend read(LocalDate day) {
    Map<String, Long> sums = ledger.sum(COLLECTION, ids(day), DAY, day.toString(), List.of(SPENT, RESERVED));
    return new DaySpend(day, sums.get(SPENT), sums.get(RESERVED));
  }

  /**
   * Commits {@code writes} (increments, which a second application would add again) with a marker document
   * {@code marker} created in the same commit. The store's client resends a commit whose answer was lost; resent
   * after it was applied, the commit now fails (the marker exists) and adds nothing, and any failure is followed by
   * one read: a marker that exists means the commit was applied, so it succeeded. Markers lie beside the counters
   * (one small document per reservation and per step-back) until their {@code expireAt}, a day on, when Firestore's
   * TTL policy deletes them; nothing reads them but this. The counters are kept: they are what a day cost.
   */
  void commitOnce(SideWrites writes, String marker, LocalDate day) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put(DAY, day.toString());
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    fields.put(EXPIRE_AT, ledger.now().plus(MARKER_RETENTION));
    try {
      ledger.commit(writes.and(documents -> documents.create(COLLECTION, marker, fields)));
    } catch (RuntimeException e) {
      boolean applied;
      try {
        applied = !ledger.read(COLLECTION, List.of(marker)).isEmpty();
      } catch (RuntimeException unreadable) {
        e.addSuppressed(unreadable);
        throw e;
      }
      if (!applied) {
        throw e;
      }
    }
  }

  /** The id of a marker of one commit to a counter (a reservation, a step-back): never a counter's id. */
  static String marker(LocalDate day, int shard, String commitId) {
    return id(day, shard) + "_" + commitId;
  }

  /** The counter a key's reservations go to: spread evenly, and the same for every try of one key. */
  public static int shardOf(IdempotencyKey key) {
    return (int) (Long.parseLong(key.documentId().substring(0, 8), 16) % SHARDS);
  }

  static String id(LocalDate day, int shard) {
    return String.format("%s_%02d", day, shard);
  }

  static List<String> ids(LocalDate day) {
    List<String> ids = new ArrayList<>(SHARDS);
    for (int shard = 0; shard < SHARDS; shard++) {
      ids.add(id(day, shard));
    }
    return ids;
  }

  /** Atomic additions to one counter (a merge: the counter is created by its first write). */
  public static SideWrites add(LocalDate day, int shard, long reservedDelta, long spentDelta) {
    if (shard < 0 || shard >= SHARDS) {
      throw new IllegalArgumentException("no counter " + shard + ": there are " + SHARDS);
    }
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put(DAY, day.toString());
    fields.put(RESERVED, DocumentWrites.increment(reservedDelta));
    fields.put(SPENT, DocumentWrites.increment(spentDelta));
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    return writes -> writes.merge(COLLECTION, id(day, shard), fields);
  }
}
