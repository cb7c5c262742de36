package dev.once.gemini;

/**
 * Not submitted, certainly: the job's requests make a larger input file than the Files API keeps (nothing was
 * uploaded, no job asked for). A job of fewer documents fits.
 */
public final class InputTooLarge extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public InputTooLarge(String message) {
    super(message);
  }
}
