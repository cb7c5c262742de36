package dev.once.gemini;

/**
 * A finished job's answers that can no longer be read: its responses file is gone (the Files API keeps files 48
 * hours) or refused. Its documents got no answer that can be used: they go into another job.
 */
public final class AnswersGone extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public AnswersGone(String message, Throwable cause) {
    super(message, cause);
  }
}
