package dev.once.testing;

import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.Ledgers;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * A ledger in memory, for the unit tests of functions built on the library: the ledger's rules — the ones
 * {@code FirestoreLedger} follows ({@link Ledgers#over}) — over {@link MemoryStore}, which refuses, as Firestore does,
 * values it cannot hold; {@link LedgerContract} runs against both. Its clock is the store's ("server") clock: a test
 * moves time with a {@link ManualClock}. Not for production: nothing is shared between processes.
 *
 * <p>What it cannot model: a write applied whose answer is lost. Every call here is answered, so nothing is resent —
 * no create resent that meets its own record, no transaction body run again, no increment applied twice. The tests
 * of those cases run the real Firestore client against the emulator with the answers lost on the wire; a test here
 * can only throw after a call (a {@link dev.once.ledger.ForwardingLedger} that does).
 */
public final class InMemoryLedger extends ForwardingLedger {
  private final MemoryStore store;

  /** On the system clock. */
  public InMemoryLedger() {
    this(InstantSource.system());
  }

  /** @param clock the store's ("server") clock, by which leases are judged: a {@link ManualClock}, say */
  public InMemoryLedger(InstantSource clock) {
    this(LedgerOptions.defaults(), clock);
  }

  public InMemoryLedger(LedgerOptions options, InstantSource clock) {
    this(options, new MemoryStore(clock));
  }

  private InMemoryLedger(LedgerOptions options, MemoryStore store) {
    super(Ledgers.over(store, options));
    this.store = store;
  }

  /** Another instance's ledger over the same store, configured otherwise (a shorter lease, say). */
  public InMemoryLedger withOptions(LedgerOptions other) {
    return new InMemoryLedger(other, store);
  }

  /** The store itself: the records and documents of this "database". */
  public MemoryStore store() {
    return store;
  }

  /** A document written beside the records, as it stands (server times and increments resolved). */
  public Optional<Map<String, Object>> document(String collection, String id) {
    return store.document(collection, id);
  }

  /** Every document of a collection, by id. */
  public Map<String, Map<String, Object>> collection(String collection) {
    return store.documentsOf(collection);
  }

  /** Writes a document outside any commit, as another program would. */
  public void put(String collection, String id, Map<String, Object> fields) {
    store.put(collection, id, fields);
  }
}
