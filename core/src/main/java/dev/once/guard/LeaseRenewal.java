package dev.once.guard;

import dev.once.ledger.Claim;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.observe.Log;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A claim while its effect runs: its lease is renewed every third of its length (fenced by the claim), so a live
 * holder's lease never lapses however long it works, and a dead holder's runs out within one lease — a short lease,
 * taken over within about a minute, instead of one sized for the longest effect. The effect's own work is checked
 * against the lease before it starts ({@link #ensure}).
 */
final class LeaseRenewal {
  /** What {@link #ensure} adds to the work's own bound: the transit of the renewal and of the work's request. */
  static final Duration MARGIN = Duration.ofSeconds(2);
  private static final ScheduledExecutorService BEATS = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "once-lease-renewal");
    thread.setDaemon(true);
    return thread;
  });

  private final Ledger ledger;
  private final Log log;
  /** Not a monitor: renewals run on virtual threads, which a monitor held across a Firestore call pins on Java 21. */
  private final ReentrantLock lock = new ReentrantLock();
  private Claim claim;
  private boolean stopped;
  private boolean lost;
  private final ScheduledFuture<?> beat;

  LeaseRenewal(Ledger ledger, Claim claim, Log log) {
    this.ledger = ledger;
    this.log = log;
    this.claim = claim;
    long period = Math.max(1, claim.lease().toMillis() / 3);
    // The beat only starts a renewal; the renewal (a Firestore write) runs on a virtual thread of its own.
    this.beat = BEATS.scheduleWithFixedDelay(() -> Thread.startVirtualThread(this::renew), period, period,
        TimeUnit.MILLISECONDS);
  }

  Claim claim() {
    lock.lock();
    try {
      return claim;
    } finally {
      lock.unlock();
    }
  }

  private void renew() {
    lock.lock();
    try {
      if (stopped || lost) {
        return;
      }
      try {
        claim = ledger.renew(claim, claim.lease());
      } catch (LeaseLost e) {
        lost = true;
      } catch (RuntimeException e) {
        // The next beat tries again, well before the lease runs out; finishing reports a lease lost meanwhile.
        log.write("WARNING", "could not renew a lease", Map.of("keyHash", claim.key().logHash(),
            "effect", claim.effect(), "error", String.valueOf(e)));
      }
    } finally {
      lock.unlock();
    }
  }

  /** Renews the lease now unless it outlasts {@code work} plus a margin; refuses as not performed if not. */
  void ensure(Duration work) {
    Duration needed = work.plus(MARGIN);
    lock.lock();
    try {
      if (lost) {
        throw Refusal.notPerformed("the lease of " + claim.effect() + " for " + claim.key() + " was lost", null);
      }
      Instant now = ledger.now();
      if (claim.leaseExpiresAt().isAfter(now.plus(needed))) {
        return;
      }
      try {
        claim = ledger.renew(claim, needed.compareTo(claim.lease()) > 0 ? needed : claim.lease());
      } catch (RuntimeException e) {
        throw Refusal.notPerformed("the lease of " + claim.effect() + " for " + claim.key()
            + " could not be extended to cover " + work.toSeconds() + " s of work: " + e.getMessage(), e);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Stops the renewals (waiting for one in progress) and answers the claim as it now stands, to finish it. */
  Claim stop() {
    beat.cancel(false);
    lock.lock();
    try {
      stopped = true;
      return claim;
    } finally {
      lock.unlock();
    }
  }
}
