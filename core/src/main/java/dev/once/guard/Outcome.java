package dev.once.guard;

import dev.once.ledger.ResultCodec;
import dev.once.observe.OutcomeLabel;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * What happened to one effect for one key, as {@link Once} reports it; switch over it. Test doubles make one with the
 * named factories ({@link #processed}, {@link #duplicate}, {@link #deferred}, {@link #rejected}).
 */
public sealed interface Outcome {
  /** The label in logs and metrics. */
  OutcomeLabel label();

  /**
   * The effect's recorded result, decoded by {@code codec}: present when this delivery ran it ({@link Processed}) or
   * an earlier one did ({@link Duplicate}), empty for every other outcome.
   */
  default <T> Optional<T> recorded(ResultCodec<T> codec) {
    return switch (this) {
      case Processed processed -> Optional.of(codec.decode(processed.result()));
      case Duplicate duplicate -> Optional.of(codec.decode(duplicate.result()));
      default -> Optional.empty();
    };
  }

  /** This delivery ran the effect and recorded it, after {@code attempts} tries. */
  static Outcome.Processed processed(Map<String, Object> result, int attempts) {
    return new Processed(result, attempts, Optional.empty());
  }

  static Outcome.Duplicate duplicate(Map<String, Object> result, int attempts) {
    return new Duplicate(result, attempts);
  }

  static Outcome.Deferred deferred(String reason, int attempts) {
    return new Deferred(reason, attempts);
  }

  /** Refused for good for its input, earlier (not {@link Rejected#now}) or, {@code gaveUp}, at its cap of tries. */
  static Outcome.Rejected rejected(String reason, boolean gaveUp) {
    return new Rejected(reason, false, gaveUp);
  }

  /** This delivery ran the effect and recorded it. */
  final class Processed implements Outcome {
    private final Map<String, Object> result;
    private final int attempts;
    private final Optional<Held> next;

    Processed(Map<String, Object> result, int attempts, Optional<Held> next) {
      // No result is recorded as no fields (RecordLayout): this delivery answers as its duplicates will.
      this.result = result == null ? Map.of() : result;
      this.attempts = attempts;
      this.next = next;
    }

    /** What was recorded as its result (and is answered to every duplicate). */
    public Map<String, Object> result() {
      return result;
    }

    /** Which try this was: 1 for the first delivery to hold the claim. */
    public int attempts() {
      return attempts;
    }

    /** The claim of the effect that follows, taken in the completing commit ({@link Policy#then}), if any. */
    public Optional<Held> next() {
      return next;
    }

    public OutcomeLabel label() {
      return OutcomeLabel.PROCESSED;
    }

    @Override
    public String toString() {
      return "Processed[result=" + result + ", attempts=" + attempts + ", next=" + next + "]";
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
