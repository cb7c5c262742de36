package dev.once.guard;

import dev.once.key.IdempotencyKey;

/**
 * Told of each effect's life in this process, as {@link Once} runs it: claimed (before the effect runs), completing
 * (the effect ran; its completion is about to be committed) and completed (committed). For fault injection and
 * metrics: once-testing's {@code CrashPoints} kills the process at one of these points, as a machine that dies
 * mid-event would.
 *
 * <p>Listeners are found with {@link java.util.ServiceLoader} when {@code Once} is first loaded: a jar on the class
 * path that declares one ({@code META-INF/services/dev.once.guard.EffectListener}) turns it on, for every guard of
 * the process. The library declares none, and a deployment's jar should not either. A listener that throws fails the
 * delivery at that point.
 */
public interface EffectListener {
  /** This delivery holds the claim of {@code effect} for {@code key}, and the effect is about to run. */
  default void claimed(IdempotencyKey key, String effect) {}

  /** The effect ran; the commit recording its completion is about to be made. */
  default void completing(IdempotencyKey key, String effect) {}

  /** The completion was committed. */
  default void completed(IdempotencyKey key, String effect) {}
}
