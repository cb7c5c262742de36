package dev.once.observe;

import java.util.Locale;

/**
 * What happened to one event, as its log line labels it; the log-based metric counts lines by this label, so the
 * duplicate and rejected shares can be watched and alerted on.
 */
public enum OutcomeLabel {
  /** This delivery ran the effect. */
  PROCESSED,
  /** The effect had run before: a redelivery absorbed. */
  DUPLICATE,
  /** Another delivery holds the claim: retried later. */
  IN_FLIGHT,
  /** The key was reused with a different payload: not run. */
  CONFLICT,
  /** Refused for good: bad input, recorded with its reason. */
  REJECTED,
  /**
   * A transient failure: the event is redelivered. Or one given up for good after its cap of tries that may have
   * run ({@code ONCE_MAX_ATTEMPTS}): acknowledged, recorded as failed with the reason.
   */
  FAILED,
  /** Waiting for something outside the event (a spending budget): resumed later, not redelivered. */
  DEFERRED,
  /** An HTTP request refused before it was authenticated (bad signature or token, oversized): internet noise. */
  UNAUTHENTICATED,
  /** A poller finding work already done (not a platform redelivery, so not counted as a duplicate). */
  RELISTED;

  /** The label as logs and metrics spell it: {@code in_flight}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Log severity: normal outcomes are INFO, refusals WARNING, failures and conflicts ERROR. */
  public String severity() {
    return switch (this) {
      case PROCESSED, DUPLICATE, IN_FLIGHT, DEFERRED, RELISTED -> "INFO";
      case REJECTED, UNAUTHENTICATED -> "WARNING";
      case CONFLICT, FAILED -> "ERROR";
    };
  }

  @Override
  public String toString() {
    return label();
  }
}
