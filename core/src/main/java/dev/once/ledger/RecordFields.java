package dev.once.ledger;

/**
 * The fields of a ledger record as every store keeps them (Firestore: one document per record, in the ledger's
 * collection), for tools that query the records themselves ({@code once stats}, {@code once stuck}); everything else
 * reads a record through {@link Ledger#lookup} as a {@link LedgerRecord}.
 */
public final class RecordFields {
  public static final String KEY = "key";
  public static final String EFFECT = "effect";
  public static final String STATE = "state";
  public static final String TOKEN = "token";
  public static final String ATTEMPTS = "attempts";
  public static final String LEASE_EXPIRES_AT = "leaseExpiresAt";
  /** The TTL field: the record's last write's time plus the retention period. */
  public static final String EXPIRE_AT = "expireAt";
  public static final String FINGERPRINT = "fingerprint";
  public static final String ERROR = "error";
  public static final String OUTCOME = "outcome";
  public static final String CREATED_AT = "createdAt";
  public static final String UPDATED_AT = "updatedAt";
  public static final String FINISHED_AT = "finishedAt";
  public static final String RELEASED_BY = "releasedBy";
  public static final String RELEASED_AT = "releasedAt";
  public static final String RELEASE_REASON = "releaseReason";
  public static final String CALLS = "calls";
  public static final String SPENT = "spent";
  /** The id of the write that last changed the record: how a resent write recognises its own application. */
  public static final String NONCE = "nonce";
  /** On a rejected record: refused because its cap of tries was reached, not for its input. */
  public static final String GAVE_UP = "gaveUp";
  /** Which run of the effect the record is about (absent: the first); an operator's invalidation moves it on. */
  public static final String GENERATION = "generation";
  /** The runs an operator invalidated, oldest first ({@link LedgerRecord.Invalidated}, stored as maps). */
  public static final String HISTORY = "history";
  /** How a give-up's reason starts, on records written before {@link #GAVE_UP} was. */
  private static final String LEGACY_GAVE_UP = "gave up after ";

  private RecordFields() {}

  /** Whether a rejected record's {@link #GAVE_UP} field (or, on a record older than it, its reason) says given up. */
  public static boolean gaveUp(Object gaveUpField, String error) {
    return gaveUpField == null ? error != null && error.startsWith(LEGACY_GAVE_UP) : Boolean.TRUE.equals(gaveUpField);
  }
}
