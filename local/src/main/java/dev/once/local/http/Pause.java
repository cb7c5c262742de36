package dev.once.local.http;

import java.time.Duration;

/** A stand-in's own wait (a late answer, a retry's backoff) on the calling thread, ended early by an interrupt. */
public final class Pause {
  private Pause() {}

  /** Waits {@code duration}; false (with the thread's interrupt flag set again) when interrupted. */
  public static boolean of(Duration duration) {
    try {
      Thread.sleep(duration);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
