package dev.once.firestore;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.once.internal.firestore.Times;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult.Busy;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.SideWrites;
import dev.once.testing.LedgerContract;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ledger contract against Firestore (the emulator), and what only Firestore has: server time read from its
 * answers while the instance's clock is wrong, and records stored under a hash of (effect, key).
 */
class FirestoreLedgerTest extends LedgerContract {
  private final Firestore db = TestFirestore.client();
  private final LedgerOptions config = LedgerOptions.defaults();

  @BeforeEach
  void clear() {
    TestFirestore.clear();
  }

  @Override
  protected Ledger ledger(Duration lease) {
    return new FirestoreLedger(db, config.withLease(lease));
  }

  @Override
  protected void passTime(Duration duration) {
    TestFirestore.passTime(duration);
  }

  @Override
  protected Optional<Map<String, Object>> document(String collection, String id) {
    try {
      DocumentSnapshot snapshot = db.collection(collection).document(id).get().get();
      if (!snapshot.exists()) {
        return Optional.empty();
      }
      Map<String, Object> fields = new HashMap<>(snapshot.getData());
      fields.replaceAll((name, value) -> value instanceof Timestamp t ? Times.instant(t) : value);
      return Optional.of(fields);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected void put(String collection, String id, Map<String, Object> fields) {
    try {
      db.collection(collection).document(id).set(fields).get();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private FirestoreLedger ledger(Duration lease, InstantSource instanceClock) {
    return new FirestoreLedger(db, config.withLease(lease), instanceClock);
  }

  private DocumentSnapshot stored(IdempotencyKey key, String effect) throws Exception {
    return db.collection(config.collection()).document(FirestoreLedger.recordId(key, effect)).get().get();
  }

  @Test
  void completion_setsExpireAtToItsTimePlusRetention_forTheTtlPolicy() throws Exception {
    Ledger ledger = ledger(LONG_LEASE);
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    DocumentSnapshot record = stored(KEY, EFFECT);
    Instant finished = Times.instant(record.getTimestamp("finishedAt"));
    Instant expireAt = Times.instant(record.getTimestamp(FirestoreLedger.EXPIRE_AT));
    assertTrue(Duration.between(finished.plus(config.retention()), expireAt).abs().toSeconds() < 5,
        "expireAt is completion time plus retention: " + expireAt + " vs " + finished);
  }

  @Test
  void instanceClockTenMinutesAhead_doesNotTakeOverALiveLease() {
    Duration lease = Duration.ofSeconds(60);
    acquired(ledger(lease).claim(KEY, EFFECT));
    InstantSource ahead = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));
    FirestoreLedger skewed = ledger(lease, ahead);
    assertInstanceOf(Busy.class, skewed.claim(KEY, EFFECT));
  }

  @Test
  void instanceClockTenMinutesBehind_writesALeaseOthersStillSeeLive() throws Exception {
    Duration lease = Duration.ofSeconds(60);
    InstantSource behind = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10));
    FirestoreLedger skewed = ledger(lease, behind);
    // Calibrate on an unrelated read first, as a warm instance would be.
    skewed.lookup(IdempotencyKey.of("warm-up"), EFFECT);
    acquired(skewed.claim(KEY, EFFECT));
    assertInstanceOf(Busy.class, ledger(lease).claim(KEY, EFFECT));
    DocumentSnapshot record = stored(KEY, EFFECT);
    Duration left = Duration.between(Times.instant(record.getReadTime()),
        Times.instant(record.getTimestamp("leaseExpiresAt")));
    assertTrue(left.compareTo(Duration.ofSeconds(50)) > 0 && left.compareTo(Duration.ofSeconds(61)) < 0,
        "the lease runs about 60 s of server time: " + left);
  }

  @Test
  void recordIds_differByKeyAndByEffect() {
    assertFalse(FirestoreLedger.recordId(KEY, "analyse").equals(FirestoreLedger.recordId(KEY, "publish")));
    assertFalse(FirestoreLedger.recordId(KEY, "a").equals(
        FirestoreLedger.recordId(IdempotencyKey.of(KEY.value() + "x"), "a")));
  }
}
