package dev.once.pipeline;

import java.util.Locale;
import java.util.Optional;

/**
 * Where a document stands: the {@code status} of its analysis ({@link RecordWrites}) and of the result published for it,
 * stored as {@link #value()}. One type, so a status misspelt in a query or a comparison is a compile error, not a
 * count that silently finds nothing.
 */
public enum DocumentStatus {
  /** Handed to a batch job ({@code job}: its name), whose completion fills the analysis in. */
  SUBMITTED,
  /** Answered by the model, and billed. */
  ANALYSED,
  /** No answer that could be used: given up, or an answer that is not an invoice (billed if the model answered). */
  FAILED,
  /** Refused before any paid call: not a document the pipeline analyses. */
  REJECTED,
  /** Batch mode: validated and reserved for, waiting to be gathered into a job ({@code size}, {@code queuedAt}). */
  QUEUED,
  /** Batch mode: assigned to a gathering ({@code batch}: its id), whose job is being submitted. */
  GATHERED,
  /** The same bytes as an earlier document ({@code duplicateOf}: its key): not analysed again, not billed. */
  DUPLICATE,
  /** Waiting for the day's budget (resumed by the reconciler, oldest {@code deferredAt} first), or for a copy's first. */
  DEFERRED;

  private final String value = name().toLowerCase(Locale.ROOT);

  /** As stored in a record and a result: the name in lower case. */
  public String value() {
    return value;
  }

  /** Whether a stored {@code status} (a record's field, read as it is) is this one. */
  public boolean is(Object stored) {
    return this == stored || value.equals(stored);
  }

  /** The status a record stores, if it is one of these (empty: none, or one this version does not know). */
  public static Optional<DocumentStatus> of(Object stored) {
    for (DocumentStatus status : values()) {
      if (status.is(stored)) {
        return Optional.of(status);
      }
    }
    return Optional.empty();
  }
}
