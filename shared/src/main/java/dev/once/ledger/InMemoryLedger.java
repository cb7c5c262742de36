package dev.once.ledger;

import dev.once.firestore.FirestoreLedger;
import dev.once.internal.ledger.LedgerConfig;
import dev.once.internal.ledger.LedgerStateMachine;
import dev.once.internal.ledger.MemoryStore;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * A ledger in memory: {@link LedgerStateMachine}'s rules — the ones {@link FirestoreLedger} follows — over a store in
 * memory ({@link MemoryStore}) that refuses, as Firestore does, values it cannot hold; for the unit tests of
 * functions that use the library. The same contract tests run against both. Its clock is the store's ("server")
 * clock: tests move time by passing one they control. Not for production: nothing is shared between instances.
 *
 * <p>What it cannot model: a write applied whose answer is lost. Every call here is answered, so nothing is resent —
 * no create resent that meets its own record, no transaction body run again, no increment applied twice. The tests
 * of those cases ({@code *Resend*}) run the real Firestore client against the emulator with the answers lost on the
 * wire; a test here can only throw after a call, as {@code OnceTest} does.
 */
public final class InMemoryLedger extends LedgerStateMachine {
  private final MemoryStore store;

  public InMemoryLedger() {
    this(LedgerConfig.defaults(), InstantSource.system());
  }

  /** @param clock the store's ("server") clock, by which leases are judged */
  public InMemoryLedger(LedgerConfig config, InstantSource clock) {
    this(config, new MemoryStore(clock));
  }

  private InMemoryLedger(LedgerConfig config, MemoryStore store) {
    super(store, config);
    this.store = store;
  }

  /** Another instance's ledger over the same store, configured otherwise (a shorter lease, say). */
  public InMemoryLedger withConfig(LedgerConfig other) {
    return new InMemoryLedger(other, store);
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
