package dev.once.ledger.spi;

import dev.once.ledger.DocumentWrites;
import dev.once.ledger.RecordFields;
import dev.once.ledger.SideWrites;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The store contract: all a store implements for the ledger, whose rules are written once above it
 * ({@link dev.once.ledger.Ledgers#over}). Records addressed by id (their fields as {@link RecordFields} names them, times as
 * {@link Instant}s, {@link DocumentWrites#serverTime()} and {@link DocumentWrites#increment} resolved by the store),
 * documents beside them, and the store's clock. A store only knows how to read, write atomically under a
 * precondition, run a one-record transaction and tell its time: a Redis or Spanner store is these five operations,
 * and once-testing's {@code LedgerContract} checks one against the rules. Firestore's is the one to deploy
 * ({@code FirestoreLedger}); once-testing's {@code MemoryStore} is another.
 */
public interface RecordStore {
  /** The record as it is now, with the store's time of the read. */
  Snapshot read(String id);

  /** Documents beside the records, by id, in one read: the fields of those that exist. */
  Map<String, Map<String, Object>> read(String collection, List<String> ids);

  /**
   * The sums of whole-number {@code fields} over documents beside the records, in one read, named two ways that
   * agree: by id (at most 30), and as those of the collection whose {@code field} equals {@code value} and that hold
   * every summed field ({@link dev.once.ledger.Ledger#sum}). A missing document, one lacking a summed field, or one
   * whose {@code field} is not {@code value} adds nothing. By default the documents are read by id ({@link
   * #read(String, List)}) and added up; a store that bills each document read sums them itself (Firestore: one
   * aggregation over an index on the field and the summed fields, one read billed, where reading 16 counters bills 16).
   */
  default Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields) {
    return Sums.of(read(collection, ids).values(), field, value, fields);
  }

  /**
   * Writes {@code records} and {@code writes} in one atomic commit, each record under its precondition; answers the
   * update time of each record written, in order. Throws {@link Refused} when the store says why it did not (or may
   * not have) applied it; any other failure as it came.
   */
  List<Instant> commit(List<RecordWrite> records, SideWrites writes);

  /**
   * Reads the record in a transaction and commits what {@code body} decides (its records written only if the record
   * is still as read), atomically; answers the decision's result. The body may run more than once. Failures as for
   * {@link #commit}.
   */
  <T> T transact(String id, Function<Snapshot, Decision<T>> body);

  /** The store's time as this instance tells it without asking the store, or empty when it never heard from it. */
  Optional<Instant> time();

  /**
   * A record as read: its fields (null when it does not exist), its update time, and the time of the read.
   */
  record Snapshot(String id, Map<String, Object> fields, Instant updateTime, Instant readTime) {
    public boolean exists() {
      return fields != null;
    }
  }

  /** A write of one record: its fields (an update replaces the fields named), under a precondition. */
  record RecordWrite(String id, Map<String, Object> fields, Precondition precondition) {
    /** The record must not exist. */
    public static RecordWrite create(String id, Map<String, Object> fields) {
      return new RecordWrite(id, fields, new Precondition.Absent());
    }

    /** The record must still bear {@code updatedAt}, or (null) be as read in this transaction. */
    public static RecordWrite update(String id, Map<String, Object> fields, Instant updatedAt) {
      return new RecordWrite(id, fields,
          updatedAt == null ? new Precondition.AsRead() : new Precondition.UpdatedAt(updatedAt));
    }
  }

  /** What must hold of a record for its write to apply. */
  sealed interface Precondition {
    record Absent() implements Precondition {}

    record UpdatedAt(Instant time) implements Precondition {}

    /** Exists, and unchanged since this transaction read it (outside a transaction: exists). */
    record AsRead() implements Precondition {}
  }

  /** What a transaction's body decided: its result, and the writes to commit with it (none: only answer). */
  record Decision<T>(T result, List<RecordWrite> records, SideWrites writes) {
    public static <T> Decision<T> answer(T result) {
      return new Decision<>(result, List.of(), SideWrites.NONE);
    }

    public static <T> Decision<T> write(T result, List<RecordWrite> records, SideWrites writes) {
      return new Decision<>(result, records, writes);
    }
  }

  /** A commit the store refused, or whose fate it cannot tell; {@link #original} is what the store threw. */
  final class Refused extends RuntimeException {
    public enum Why {
      /** A record or document it creates exists. */
      EXISTS,
      /** A precondition failed: the record changed or vanished since it was read or written. */
      STALE,
      /** Another transaction holds the record. */
      CONTENDED,
      /** The commit may have been applied, its answer lost (a timeout, a reset, a 5xx). */
      UNKNOWN
    }

    private final Why why;
    private final RuntimeException original;

    public Refused(Why why, RuntimeException original) {
      super(why + ": " + original.getMessage(), original, false, false);
      this.why = why;
      this.original = original;
    }

    public Why why() {
      return why;
    }

    /** What the store threw, for the caller to see. */
    public static RuntimeException original(RuntimeException e) {
      return e instanceof Refused refused ? refused.original : e;
    }
  }
}
