package dev.once.firestore;

import com.google.cloud.firestore.Firestore;
import dev.once.config.Settings;
import dev.once.internal.firestore.FirestoreStore;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.Ledgers;
import dev.once.ledger.RecordFields;
import java.time.InstantSource;

/**
 * The ledger to deploy: the ledger's rules ({@link Ledgers#over}) over Firestore, one document per record in the
 * configured collection, under its {@link #recordId}.
 */
public final class FirestoreLedger extends ForwardingLedger {
  /** The TTL field of a record: its last write's time plus the retention period. */
  public static final String EXPIRE_AT = RecordFields.EXPIRE_AT;

  public FirestoreLedger(Firestore db, LedgerOptions options) {
    this(db, options, InstantSource.system());
  }

  /** {@code instanceClock} is this instance's clock, which may be wrong; tests pass a skewed one. */
  public FirestoreLedger(Firestore db, LedgerOptions options, InstantSource instanceClock) {
    super(Ledgers.over(new FirestoreStore(db, options, instanceClock), options));
  }

  /** The ledger {@code settings} name (project, emulator, collection, lease), connected on first use. */
  public static Ledger fromSettings(Settings settings) {
    LedgerOptions options = LedgerOptions.fromSettings(settings);
    return Ledgers.lazy(() -> new FirestoreLedger(FirestoreClients.create(settings), options));
  }

  /** The document id of (key, effect)'s record: {@link Ledgers#recordId}. */
  public static String recordId(IdempotencyKey key, String effect) {
    return Ledgers.recordId(key, effect);
  }
}
