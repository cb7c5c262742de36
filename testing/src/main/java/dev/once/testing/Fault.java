package dev.once.testing;

/**
 * The faults a function's effect must come through happening once: the ones this project's own crash and
 * ambiguous-failure matrices run its functions through, in process. Each delivery also comes once more after it was
 * acknowledged, as every trigger may deliver it.
 */
public enum Fault {
  /** Nothing fails; every event (or request) is delivered twice. */
  REDELIVERED,
  /**
   * The process dies after the effect ran, before its completion was committed: the claim stays held until its lease
   * runs out, and the event is delivered again then (the clock moved past the lease), to another instance.
   */
  CRASH_AFTER_EFFECT,
  /**
   * The effect's first request reached the endpoint and was carried out, but its answer was lost (the connection
   * reset): the function sees a failure although the effect happened, and the event is delivered again.
   */
  ANSWER_LOST
}
