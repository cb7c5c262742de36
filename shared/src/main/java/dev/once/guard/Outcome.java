package dev.once.guard;

import java.time.Instant;
import java.util.Map;

/** What happened to one effect for one key, as {@link Once} reports it. */
public sealed interface Outcome {
  /** The label in logs and metrics: processed, duplicate, in_flight, conflict, rejected. */
  String label();

  /** This delivery ran the effect and recorded it. */
  record Processed(Map<String, Object> result, int attempts) implements Outcome {
    public String label() {
      return "processed";
    }
  }

  /** The effect had run already; {@code result} is what was recorded then. */
  record Duplicate(Map<String, Object> result, int attempts) implements Outcome {
    public String label() {
      return "duplicate";
    }
  }

  /** Another delivery holds the claim; retry later (its lease expires if it died). */
  record InFlight(Instant leaseExpiresAt, int attempts) implements Outcome {
    public String label() {
      return "in_flight";
    }
  }

  /** The key was used before with another payload: the effect did not run. */
  record Conflict(String storedFingerprint, String offeredFingerprint) implements Outcome {
    public String label() {
      return "conflict";
    }
  }

  /** The effect is refused for good: {@code now} when this delivery refused it, else earlier. */
  record Rejected(String reason, boolean now) implements Outcome {
    public String label() {
      return "rejected";
    }
  }
}
