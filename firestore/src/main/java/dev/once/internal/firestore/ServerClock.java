package dev.once.internal.firestore;

import com.google.cloud.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * Firestore's time as this instance can best tell it: the instance clock corrected by the offset seen in the
 * last server timestamp (a read time or a commit time). Leases are judged against server read times; this
 * estimate is only used to write a new claim's {@code leaseExpiresAt} and {@code expireAt}, so an instance
 * clock minutes off cannot shorten a lease. The estimate trails server time by the network transit of the
 * last answer (milliseconds), which shortens a lease by as much.
 */
final class ServerClock {
  private final InstantSource instanceClock;
  private volatile Duration offset;

  ServerClock(InstantSource instanceClock) {
    this.instanceClock = instanceClock;
  }

  void observe(Timestamp serverTime) {
    if (serverTime != null) {
      offset = Duration.between(instanceClock.instant(), Times.instant(serverTime));
    }
  }

  boolean calibrated() {
    return offset != null;
  }

  Instant now() {
    Duration current = offset;
    if (current == null) {
      throw new IllegalStateException("server clock not calibrated: observe a server timestamp first");
    }
    return instanceClock.instant().plus(current);
  }
}
