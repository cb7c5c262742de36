package dev.once.gemini;

/**
 * Google refused the model a call named (404 NOT_FOUND: shut down, closed to this project, or unknown): a configuration
 * fault, nothing done, nothing billed. Its message leads every record and line of a document waiting for it, so that
 * {@code once stuck} and {@code once stats} can tell why ({@link #says}); the SDK's error is its cause, which
 * {@link GeminiErrors} reads as before.
 */
public final class ModelUnavailable extends RuntimeException {
  private static final long serialVersionUID = 1L;
  static final String LEAD = "Gemini does not serve the model ";

  ModelUnavailable(String model, RuntimeException refusal) {
    super(LEAD + model + " (set GEMINI_MODEL to one it serves: once models): " + GeminiErrors.describe(refusal),
        refusal);
  }

  /** Whether a recorded error (a ledger record's, a log line's) is about a model Google does not serve. */
  public static boolean says(String error) {
    return error != null && error.contains(LEAD);
  }
}
