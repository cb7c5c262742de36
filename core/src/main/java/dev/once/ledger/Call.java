package dev.once.ledger;

import java.time.Instant;
import java.util.Locale;

/**
 * One try at an effect, as the ledger records it before the effect runs: its number, when it was claimed (the
 * store's time), and how it ended. A try that may have carried the effect out — it ran, it failed after its request
 * left, its holder died — counts against a cap ({@link ClaimOptions#maxSpent}); a try that certainly did not
 * ({@link Outcome#NOT_PERFORMED}: a refusal before anything happened) does not.
 *
 * @param error why it failed, or null
 */
public record Call(int number, Instant at, Outcome outcome, String error) {
  /** How a try ended, stored as its lower-case name ({@code not_performed}). */
  public enum Outcome {
    /** The holder is trying now (or died trying: its lease then runs out). */
    RUNNING,
    DONE,
    REJECTED,
    /** It failed, but may have been carried out (a timeout, a reset, a 5xx after the request left). */
    FAILED,
    /** It certainly was not carried out (refused before anything happened): free of charge. */
    NOT_PERFORMED,
    /** Its holder stopped without a word (crashed, or stalled past its lease). */
    ABANDONED;

    /** As the record stores it, and {@code once inspect} shows it. */
    public String stored() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** A value this version does not know reads as a try that may have run: the reading that never undercounts. */
    public static Outcome ofStored(Object stored) {
      for (Outcome outcome : values()) {
        if (outcome.stored().equals(stored)) {
          return outcome;
        }
      }
      return FAILED;
    }
  }

  /** Whether this try may have carried the effect out, and so counts against a cap. */
  public boolean spent() {
    return outcome != Outcome.NOT_PERFORMED;
  }

  /** This try, ended as {@code how}. */
  public Call ended(Outcome how, String why) {
    return new Call(number, at, how, why);
  }
}
