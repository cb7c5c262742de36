package dev.once.ledger;

import dev.once.config.Lazy;
import dev.once.internal.ledger.LedgerStateMachine;
import dev.once.internal.ledger.RecordLayout;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.spi.RecordStore;
import java.util.function.Supplier;

/** Ledgers built from a store, lazily, and the record id every store keeps a record under. */
public final class Ledgers {
  private Ledgers() {}

  /** The ledger's rules over {@code store}: what a store of one's own (Redis, Spanner) is used through. */
  public static Ledger over(RecordStore store, LedgerOptions options) {
    return new LedgerStateMachine(store, options);
  }

  /** A ledger built on first use: an instance that never handles an event never builds its store's client. */
  public static Ledger lazy(Supplier<? extends Ledger> factory) {
    return new ForwardingLedger(Lazy.of(factory::get)) {};
  }

  /**
   * The id of (key, effect)'s record, in every store: a hash, because keys hold '/' and arbitrary user text. The
   * effect's name must match {@code [a-z][a-z0-9._-]{0,63}} (it is also a log label); anything else is an
   * {@link IllegalArgumentException}.
   */
  public static String recordId(IdempotencyKey key, String effect) {
    return RecordLayout.recordId(key, effect);
  }
}
