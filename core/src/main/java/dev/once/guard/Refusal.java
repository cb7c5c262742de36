package dev.once.guard;

import dev.once.ledger.SideWrites;
import java.time.Instant;

/**
 * What an effect throws to say it was not carried out, and how the guard is to take that; made by its factories,
 * as Temporal's {@code ApplicationFailure.newNonRetryableFailure}. Each kind commits {@link #writes()} with what it
 * does to the claim. Anything else an effect throws is taken to have possibly happened.
 * <ul>
 *   <li>{@link #permanent}: must never be retried (bad input, a document that no longer exists): the claim is
 *       rejected with the reason, and the event acknowledged.
 *   <li>{@link #notPerformed}: certainly did not happen, refused before anything was done (a throttled service that
 *       bills nothing, a document that could not be read before the paid call): the claim is released, the try
 *       recorded as not performed (it does not count against a cap), and the refusal rethrown, so the platform
 *       redelivers.
 *   <li>{@link #deferred}: must wait for something outside the event (a spending budget used up for the day): released
 *       as not performed, and {@link Once} answers {@link Outcome.Deferred}, so the event is acknowledged; whatever
 *       resumes the work claims the effect again, as a redelivery would.
 *   <li>{@link #inFlight}: waits for another delivery that holds what the effect needs (the first copy of the same
 *       content, being recorded): released as not performed, and {@link Once} answers {@link Outcome.InFlight}, as
 *       for a claim held elsewhere, so the entry logs it as in flight and the platform redelivers.
 * </ul>
 */
public class Refusal extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** How the guard takes the refusal. */
  public enum Kind { PERMANENT, NOT_PERFORMED, DEFERRED, IN_FLIGHT }

  private final Kind kind;
  private final transient SideWrites writes;
  private final Instant heldUntil;

  /** For a refusal of a kind of its own (a subclass that names a case); otherwise use the factories. */
  protected Refusal(Kind kind, String message, Throwable cause, SideWrites writes) {
    this(kind, message, cause, writes, null);
  }

  private Refusal(Kind kind, String message, Throwable cause, SideWrites writes, Instant heldUntil) {
    super(message, cause);
    this.kind = kind;
    this.writes = writes == null ? SideWrites.NONE : writes;
    this.heldUntil = heldUntil;
  }

  public static Refusal permanent(String reason) {
    return permanent(reason, SideWrites.NONE);
  }

  /** Rejected for good with {@code reason}, committing {@code writes} (a rejected analysis, say) with it. */
  public static Refusal permanent(String reason, SideWrites writes) {
    return new Refusal(Kind.PERMANENT, reason, null, writes);
  }

  public static Refusal notPerformed(String message, Throwable cause) {
    return notPerformed(message, cause, SideWrites.NONE);
  }

  /** Released uncounted and redelivered, committing {@code writes} (undoing what the try set aside) with it. */
  public static Refusal notPerformed(String message, Throwable cause, SideWrites writes) {
    return new Refusal(Kind.NOT_PERFORMED, message, cause, writes);
  }

  /** Released uncounted and acknowledged as deferred, committing {@code writes} (the record that says why). */
  public static Refusal deferred(String reason, SideWrites writes) {
    return new Refusal(Kind.DEFERRED, reason, null, writes);
  }

  /**
   * Released uncounted and answered as {@link Outcome.InFlight}: what the effect needs is held by another delivery,
   * whose lease runs until {@code heldUntil} (then a redelivery takes it over, if its holder died).
   */
  public static Refusal inFlight(String reason, Instant heldUntil) {
    return new Refusal(Kind.IN_FLIGHT, reason, null, SideWrites.NONE, heldUntil);
  }

  public Kind kind() {
    return kind;
  }

  public boolean is(Kind other) {
    return kind == other;
  }

  /** Committed with what the guard does to the claim. */
  public SideWrites writes() {
    return writes;
  }

  /** {@link #inFlight}: until when the other delivery holds it; null for the other kinds. */
  public Instant heldUntil() {
    return heldUntil;
  }
}
