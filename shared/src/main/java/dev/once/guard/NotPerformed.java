package dev.once.guard;

/**
 * Thrown by an effect that certainly did not happen: refused before anything was done (a throttled or overloaded
 * service that bills nothing, a document that could not be read before the paid call). The claim is released and the
 * try recorded as not performed, so it does not count against a cap of tries; the failure is rethrown, so the
 * platform redelivers. Anything else an effect throws is taken to have possibly happened.
 */
public class NotPerformed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public NotPerformed(String message, Throwable cause) {
    super(message, cause);
  }
}
