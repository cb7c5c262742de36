package dev.once.guard;

import dev.once.internal.ledger.Claim;
import dev.once.observe.OutcomeLabel;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** What happened to one effect for one key, as {@link Once} reports it. */
public sealed interface Outcome {
  /** The label in logs and metrics. */
  OutcomeLabel label();

  /**
   * This delivery ran the effect and recorded it.
   *
   * @param next the claim of the effect that follows, taken in the completing commit ({@link Policy#then}), if any
   */
  record Processed(Map<String, Object> result, int attempts, Optional<Claim> next) implements Outcome {
    public Processed(Map<String, Object> result, int attempts) {
      this(result, attempts, Optional.empty());
    }

    public OutcomeLabel label() {
      return OutcomeLabel.PROCESSED;
    }
  }

  /** The effect had run already; {@code result} is what was recorded then. */
  record Duplicate(Map<String, Object> result, int attempts) implements Outcome {
    public OutcomeLabel label() {
      return OutcomeLabel.DUPLICATE;
    }
  }

  /** Another delivery holds the claim; retry later (its lease expires if it died). */
  record InFlight(Instant leaseExpiresAt, int attempts) implements Outcome {
    public OutcomeLabel label() {
      return OutcomeLabel.IN_FLIGHT;
    }
  }

  /** The key was used before with another payload: the effect did not run. */
  record Conflict(String storedFingerprint, String offeredFingerprint) implements Outcome {
    public OutcomeLabel label() {
      return OutcomeLabel.CONFLICT;
    }
  }

  /**
   * The effect waits for something outside the event (a budget: {@link Refusal#deferred}): this try was released
   * as not performed, with the writes that record why, and the event is acknowledged. Whatever resumes it (a poller)
   * claims it again; until then a redelivery tries again too.
   */
  record Deferred(String reason, int attempts) implements Outcome {
    public OutcomeLabel label() {
      return OutcomeLabel.DEFERRED;
    }
  }

  /**
   * The effect is refused for good: {@code now} when this delivery refused it, else earlier; {@code gaveUp} when its
   * cap of tries that may have run was reached, not for its input.
   */
  record Rejected(String reason, boolean now, boolean gaveUp) implements Outcome {
    /**
     * Rejected for its input; failed when given up: nothing was wrong with the input, every try failed, and the
     * records say failed too (an analysis given up is {@code failed}), so the log line and the alerts on failures
     * must count it as one.
     */
    public OutcomeLabel label() {
      return gaveUp() ? OutcomeLabel.FAILED : OutcomeLabel.REJECTED;
    }
  }
}
