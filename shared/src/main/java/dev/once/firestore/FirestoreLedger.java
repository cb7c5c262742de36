package dev.once.firestore;

import com.google.cloud.firestore.Firestore;
import dev.once.config.Settings;
import dev.once.internal.firestore.FirestoreClients;
import dev.once.internal.firestore.FirestoreStore;
import dev.once.internal.ledger.LedgerConfig;
import dev.once.internal.ledger.LedgerStateMachine;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Ledger;
import java.time.InstantSource;

/**
 * The ledger to deploy: {@link LedgerStateMachine}'s rules over Firestore ({@link FirestoreStore}), one document per
 * record in the configured collection.
 */
public final class FirestoreLedger extends LedgerStateMachine {
  /** The TTL field of a record: its last write's time plus the retention period. */
  public static final String EXPIRE_AT = LedgerStateMachine.EXPIRE_AT;

  public FirestoreLedger(Firestore db, LedgerConfig config) {
    this(db, config, InstantSource.system());
  }

  /** The ledger {@code settings} name (project, emulator, collection, lease, cap), connected on first use. */
  public static Ledger fromSettings(Settings settings) {
    return Ledger.lazy(() -> new FirestoreLedger(FirestoreClients.create(settings), LedgerConfig.fromSettings(settings)));
  }

  /** {@code instanceClock} is this instance's clock, which may be wrong; tests pass a skewed one. */
  public FirestoreLedger(Firestore db, LedgerConfig config, InstantSource instanceClock) {
    super(new FirestoreStore(db, config, instanceClock), config);
  }

  /** The document id of (key, effect)'s record: {@link Ledger#recordId}. */
  public static String recordId(IdempotencyKey key, String effect) {
    return Ledger.recordId(key, effect);
  }
}
