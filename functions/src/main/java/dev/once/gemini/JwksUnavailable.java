package dev.once.gemini;

/**
 * The keys a webhook token must be checked against could not be fetched (unreachable, an error status, not a JWKS,
 * too large): nothing can be said about the token, so the webhook answers 503 and Gemini delivers again later.
 * Never a reason to accept a delivery.
 */
public final class JwksUnavailable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public JwksUnavailable(String message, Throwable cause) {
    super(message, cause);
  }
}
