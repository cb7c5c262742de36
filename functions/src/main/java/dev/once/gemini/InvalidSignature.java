package dev.once.gemini;

/** A webhook whose signature does not verify: missing, malformed, forged, stale or from the future. */
public final class InvalidSignature extends Exception {
  private static final long serialVersionUID = 1L;

  public InvalidSignature(String reason) {
    super(reason);
  }
}
