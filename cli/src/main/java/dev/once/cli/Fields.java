package dev.once.cli;

import dev.once.firestore.FirestoreLedger;
import dev.once.guard.Once;
import dev.once.pipeline.RecordWrites;

/**
 * The stored field names the tool queries and counts by. The ledger's are {@link FirestoreLedger}'s record layout
 * (package-private there); everything the tool shows of a record it reads through {@code Ledger.lookup} and
 * {@code LedgerRecord}, so only these names have to stay in step.
 */
public final class Fields {
  /** Ledger records. */
  public static final String KEY = "key";
  public static final String EFFECT = "effect";
  public static final String STATE = "state";
  public static final String ERROR = "error";
  public static final String UPDATED_AT = "updatedAt";
  public static final String LEASE_EXPIRES_AT = "leaseExpiresAt";

  /** Analyses ({@link RecordWrites}), and the spending guard's status and time (not written yet by {@link RecordWrites}). */
  public static final String STATUS = "status";
  public static final String DEFERRED_AT = "deferredAt";
  /** Batch mode: an analysis's place in the queue and its gathering ({@link RecordWrites}). */
  public static final String QUEUED_AT = "queuedAt";
  public static final String BATCH = "batch";
  /** Batch mode: a gathering's times, job and size ({@link dev.once.pipeline.Gatherings}). */
  public static final String OPENED_AT = "openedAt";
  public static final String SEALED_AT = "sealedAt";
  public static final String SUBMITTED_AT = "submittedAt";
  public static final String JOB = "job";
  public static final String DOCUMENTS = "documents";

  private Fields() {}

  /**
   * A ledger error the spending guard released a claim with ({@link dev.once.guard.Once#DEFERRED}): not a failure,
   * and its document is counted and listed among the deferred analyses already.
   */
  public static boolean deferral(String error) {
    return error != null && error.startsWith(Once.DEFERRED);
  }
}
