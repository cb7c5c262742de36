package dev.once.gemini;

/** Not submitted, certainly: the job's input could not be stored, so no job was asked for. Try again later. */
public final class NotSubmitted extends RuntimeException {
  private static final long serialVersionUID = 1L;

  NotSubmitted(String message, Throwable cause) {
    super(message, cause);
  }
}
