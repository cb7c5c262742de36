package dev.once.functions.it;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/** A dependency kept down for a while: the length of an outage is the point, not a guess at a wait. */
final class Outage {
  private Outage() {}

  static void last(Duration duration) {
    long end = System.nanoTime() + duration.toNanos();
    while (System.nanoTime() < end) {
      LockSupport.parkNanos(end - System.nanoTime());
    }
  }
}
