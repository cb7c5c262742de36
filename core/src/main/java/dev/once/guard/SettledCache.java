package dev.once.guard;

import dev.once.ledger.ClaimResult;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What this instance knows the ledger made final (done or rejected — never a claim), so a duplicate reaching the
 * instance that settled it, or saw it settled, costs no Firestore read. Bounded in entries (least recently used go
 * first) and in age (far below the ledger's retention, after which a record may be deleted). Safe because a final
 * record never changes on its own: only its TTL deletion ends it, or a deliberate move to its next run (an operator's
 * {@code invalidate}, or {@link Once#pass}, which forgets its entry here; another instance still answers from its
 * own cache until the entry ages out).
 */
final class SettledCache {
  private record Known(ClaimResult settled, String fingerprint, boolean fingerprintKnown, long cachedAt) {}

  private final int maxEntries;
  private final long maxAgeNanos;
  private final Map<String, Known> entries;

  SettledCache(int maxEntries, Duration maxAge) {
    this.maxEntries = maxEntries;
    this.maxAgeNanos = maxAge.toNanos();
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Known> eldest) {
        return size() > SettledCache.this.maxEntries;
      }
    };
  }

  /**
   * A final answer for {@code recordId}, judged against {@code offered} as the record itself would be; empty when
   * unknown here (or when the offered fingerprint cannot be judged from what is known).
   */
  synchronized Optional<ClaimResult> get(String recordId, String offered) {
    Known entry = entries.get(recordId);
    if (entry == null) {
      return Optional.empty();
    }
    if (System.nanoTime() - entry.cachedAt() > maxAgeNanos) {
      entries.remove(recordId);
      return Optional.empty();
    }
    if (offered == null || entry.fingerprint() == null && entry.fingerprintKnown()
        || offered.equals(entry.fingerprint())) {
      return Optional.of(entry.settled());
    }
    return entry.fingerprintKnown()
        ? Optional.of(new ClaimResult.FingerprintMismatch(entry.fingerprint(), offered))
        : Optional.empty();
  }

  /** Remembers a final answer; {@code fingerprint} is the record's, when known. */
  synchronized void put(String recordId, ClaimResult settled, String fingerprint, boolean fingerprintKnown) {
    if (!(settled instanceof ClaimResult.AlreadyDone) && !(settled instanceof ClaimResult.AlreadyRejected)) {
      throw new IllegalArgumentException("only a final answer is cached, got " + settled);
    }
    entries.put(recordId, new Known(settled, fingerprint, fingerprintKnown, System.nanoTime()));
  }

  /** Forgets what is known of {@code recordId}: the record moved on purpose ({@link Once#pass}). */
  synchronized void forget(String recordId) {
    entries.remove(recordId);
  }

  synchronized int size() {
    return entries.size();
  }
}
