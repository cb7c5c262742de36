package dev.once.guard;

import dev.once.observe.OutcomeLabel;
import java.time.Instant;
import java.util.Map;

/** What happened to one effect for one key, as {@link Once} reports it. */
public sealed interface Outcome {
  /** The label in logs and metrics. */
  OutcomeLabel label();

  /** This delivery ran the effect and recorded it. */
  record Processed(Map<String, Object> result, int attempts) implements Outcome {
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

  /** The effect is refused for good: {@code now} when this delivery refused it, else earlier. */
  record Rejected(String reason, boolean now) implements Outcome {
    public OutcomeLabel label() {
      return OutcomeLabel.REJECTED;
    }
  }
}
