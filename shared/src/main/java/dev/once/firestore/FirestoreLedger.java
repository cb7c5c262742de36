package dev.once.firestore;

import dev.once.internal.firestore.FirestoreStore;
import dev.once.internal.ledger.LedgerConfig;
import dev.once.internal.ledger.LedgerStateMachine;
import dev.once.ledger.Ledger;

import com.google.cloud.firestore.Firestore;
import dev.once.key.IdempotencyKey;
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

  /** {@code instanceClock} is this instance's clock, which may be wrong; tests pass a skewed one. */
  public FirestoreLedger(Firestore db, LedgerConfig config, InstantSource instanceClock) {
    super(new FirestoreStore(db, config, instanceClock), config);
  }

  /** The document id of (key, effect)'s record: {@link Ledger#recordId}. */
  public static String recordId(IdempotencyKey key, String effect) {
    return Ledger.recordId(key, effect);
  }
}
