package dev.once.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ClaimResult.Acquired;
import dev.once.ledger.ClaimResult.AlreadyDone;
import dev.once.ledger.ClaimResult.AlreadyRejected;
import dev.once.ledger.ClaimResult.Busy;
import dev.once.ledger.ClaimResult.FingerprintMismatch;
import dev.once.local.Await;
import dev.once.testing.TestFirestore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FirestoreLedgerTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/invoice.pdf#1");
  private static final String EFFECT = "analyse";
  private static final Duration SHORT_LEASE = Duration.ofMillis(1500);

  private final Firestore db = TestFirestore.client();
  private final LedgerConfig config = LedgerConfig.defaults();
  private FirestoreLedger ledger;

  @BeforeEach
  void clear() {
    TestFirestore.clear();
    ledger = new FirestoreLedger(db, config);
  }

  private FirestoreLedger ledger(Duration lease) {
    return new FirestoreLedger(db, config.withLease(lease));
  }

  private DocumentSnapshot stored(IdempotencyKey key, String effect) throws Exception {
    return db.collection(config.collection()).document(FirestoreLedger.recordId(key, effect)).get().get();
  }

  private static Claim acquired(ClaimResult result) {
    return assertInstanceOf(Acquired.class, result, "expected the claim, got " + result).claim();
  }

  /** Claims until the expired lease is taken over; each try is one read, and the lease is short. */
  private static Claim takeOverWhenExpired(FirestoreLedger ledger, IdempotencyKey key, String effect) {
    AtomicReference<ClaimResult> result = new AtomicReference<>();
    Await.until(Duration.ofSeconds(15), () -> {
      result.set(ledger.claim(key, effect, null));
      return result.get() instanceof Acquired;
    }, "the expired lease to be taken over");
    return ((Acquired) result.get()).claim();
  }

  @Test
  void firstClaim_isAcquired_withTokenOneAndALeaseFromServerTime() throws Exception {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, "fp"));
    assertEquals(1, claim.token());
    assertEquals(1, claim.attempts());
    DocumentSnapshot record = stored(KEY, EFFECT);
    assertEquals("CLAIMED", record.getString("state"));
    assertEquals(KEY.value(), record.getString("key"));
    assertEquals(EFFECT, record.getString("effect"));
    assertEquals("fp", record.getString("fingerprint"));
    Instant serverNow = Times.instant(record.getReadTime());
    Instant leaseEnd = Times.instant(record.getTimestamp("leaseExpiresAt"));
    assertTrue(Duration.between(serverNow.plus(config.lease()), leaseEnd).abs().toSeconds() < 5,
        "lease ends a lease after server now: " + leaseEnd + " vs " + serverNow);
    assertTrue(record.getTimestamp("expireAt") != null);
  }

  @Test
  void secondDelivery_whileFirstInFlight_isBusy() {
    acquired(ledger.claim(KEY, EFFECT, null));
    ClaimResult second = ledger.claim(KEY, EFFECT, null);
    Busy busy = assertInstanceOf(Busy.class, second);
    assertEquals(1, busy.attempts());
  }

  @Test
  void secondDelivery_afterCompletion_isDuplicate_withTheStoredOutcome() throws Exception {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    ledger.complete(claim, Map.of("analysisId", "a1", "pages", 3L), SideWrites.NONE);
    AlreadyDone done = assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT, null));
    assertEquals(Map.of("analysisId", "a1", "pages", 3L), done.outcome());
    DocumentSnapshot record = stored(KEY, EFFECT);
    assertEquals("DONE", record.getString("state"));
    Instant finished = Times.instant(record.getTimestamp("finishedAt"));
    Instant expireAt = Times.instant(record.getTimestamp("expireAt"));
    assertTrue(Duration.between(finished.plus(config.retention()), expireAt).abs().toSeconds() < 5,
        "expireAt is completion time plus retention: " + expireAt + " vs " + finished);
  }

  @Test
  void rejectedEffect_staysRejected_withItsReason() {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    ledger.reject(claim, "content type text/plain is not accepted", SideWrites.NONE);
    AlreadyRejected rejected = assertInstanceOf(AlreadyRejected.class, ledger.claim(KEY, EFFECT, null));
    assertEquals("content type text/plain is not accepted", rejected.reason());
  }

  @Test
  void sameKey_withDifferentFingerprint_isConflict_andChangesNothing() throws Exception {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, "md5:aaa"));
    FingerprintMismatch inFlight = assertInstanceOf(FingerprintMismatch.class, ledger.claim(KEY, EFFECT, "md5:bbb"));
    assertEquals("md5:aaa", inFlight.stored());
    assertEquals("md5:bbb", inFlight.offered());
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertInstanceOf(FingerprintMismatch.class, ledger.claim(KEY, EFFECT, "md5:bbb"));
    assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT, "md5:aaa"));
    assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT, null), "no fingerprint offered: not compared");
    assertEquals("md5:aaa", stored(KEY, EFFECT).getString("fingerprint"));
  }

  @Test
  void effectsOfOneKey_areIndependent() {
    acquired(ledger.claim(KEY, "analyse", null));
    acquired(ledger.claim(KEY, "publish", null));
    acquired(ledger.claim(IdempotencyKey.of("gcs:inbox/invoice.pdf#2"), "analyse", null));
  }

  @Test
  void expiredLease_isTakenOver_incrementingTokenAndAttempts() throws Exception {
    FirestoreLedger shortLeases = ledger(SHORT_LEASE);
    Claim first = acquired(shortLeases.claim(KEY, EFFECT, null));
    assertInstanceOf(Busy.class, shortLeases.claim(KEY, EFFECT, null), "the lease is live at first");
    Claim second = takeOverWhenExpired(shortLeases, KEY, EFFECT);
    assertEquals(first.token() + 1, second.token());
    assertEquals(2, second.attempts());
    assertEquals(2L, stored(KEY, EFFECT).getLong("token"));
    assertEquals(2L, stored(KEY, EFFECT).getLong("attempts"));
  }

  @Test
  void staleHolder_cannotComplete_andTheNewHoldersRecordIsUntouched() throws Exception {
    FirestoreLedger shortLeases = ledger(SHORT_LEASE);
    Claim stale = acquired(shortLeases.claim(KEY, EFFECT, null));
    Claim current = takeOverWhenExpired(shortLeases, KEY, EFFECT);
    DocumentSnapshot before = stored(KEY, EFFECT);

    LeaseLost lost = assertThrows(LeaseLost.class, () -> shortLeases.complete(stale, Map.of(), SideWrites.NONE));
    assertTrue(lost.getMessage().contains("token 1"), lost.getMessage());
    assertThrows(LeaseLost.class, () -> shortLeases.reject(stale, "late", SideWrites.NONE));
    assertThrows(LeaseLost.class, () -> shortLeases.release(stale, "late"));

    DocumentSnapshot after = stored(KEY, EFFECT);
    assertEquals(before.getUpdateTime(), after.getUpdateTime(), "the stale holder wrote nothing");
    assertEquals("CLAIMED", after.getString("state"));
    assertEquals(2L, after.getLong("token"));

    shortLeases.complete(current, Map.of("by", "current"), SideWrites.NONE);
    assertEquals("DONE", stored(KEY, EFFECT).getString("state"));
    assertThrows(LeaseLost.class, () -> shortLeases.complete(current, Map.of(), SideWrites.NONE),
        "a finished claim cannot be finished twice");
  }

  @Test
  void staleHolder_cannotSlipItsSideWritesIntoTheCommit() throws Exception {
    FirestoreLedger shortLeases = ledger(SHORT_LEASE);
    Claim stale = acquired(shortLeases.claim(KEY, EFFECT, null));
    takeOverWhenExpired(shortLeases, KEY, EFFECT);
    assertThrows(LeaseLost.class, () -> shortLeases.complete(stale, Map.of(),
        writes -> writes.set(db.collection("analyses").document("a1"), Map.of("by", "stale"))));
    assertFalse(db.collection("analyses").document("a1").get().get().exists());
  }

  @Test
  void takenOverClaim_canBeTakenOverAgain_andOnlyTheLatestTokenCompletes() {
    FirestoreLedger shortLeases = ledger(SHORT_LEASE);
    acquired(shortLeases.claim(KEY, EFFECT, null));
    Claim second = takeOverWhenExpired(shortLeases, KEY, EFFECT);
    Claim third = takeOverWhenExpired(shortLeases, KEY, EFFECT);
    assertEquals(3, third.token());
    assertThrows(LeaseLost.class, () -> shortLeases.complete(second, Map.of(), SideWrites.NONE));
    shortLeases.complete(third, Map.of(), SideWrites.NONE);
    assertInstanceOf(AlreadyDone.class, shortLeases.claim(KEY, EFFECT, null));
  }

  @Test
  void release_letsTheNextDeliveryRetryAtOnce_keepingAttemptsAndError() throws Exception {
    Claim first = acquired(ledger.claim(KEY, EFFECT, null)); // a 10-minute lease
    ledger.release(first, "Gemini answered 503");
    Claim retry = acquired(ledger.claim(KEY, EFFECT, null));
    assertEquals(2, retry.attempts());
    assertEquals(2, retry.token());
    assertEquals("Gemini answered 503", stored(KEY, EFFECT).getString("error"));
    ledger.complete(retry, Map.of(), SideWrites.NONE);
    assertEquals("DONE", stored(KEY, EFFECT).getString("state"));
    assertEquals(2L, stored(KEY, EFFECT).getLong("attempts"));
  }

  @Test
  void sideWrites_landWithTheCompletion() throws Exception {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    ledger.complete(claim, Map.of("analysisId", "a1"), writes -> {
      writes.create(db.collection("analyses").document("a1"), Map.of("key", KEY.value()));
      writes.create(db.collection("billing").document("a1"), Map.of("key", KEY.value(), "tokens", 10L));
    });
    assertTrue(db.collection("analyses").document("a1").get().get().exists());
    assertTrue(db.collection("billing").document("a1").get().get().exists());
    assertEquals("DONE", stored(KEY, EFFECT).getString("state"));
  }

  @Test
  void failingSideWrite_leavesNeitherTheWritesNorTheCompletion() throws Exception {
    db.collection("billing").document("a1").set(Map.of("already", true)).get();
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    RuntimeException failed = assertThrows(RuntimeException.class, () -> ledger.complete(claim, Map.of(), writes -> {
      writes.create(db.collection("analyses").document("a1"), Map.of("key", KEY.value()));
      writes.create(db.collection("billing").document("a1"), Map.of("key", KEY.value())); // exists: fails
    }));
    assertFalse(failed instanceof LeaseLost, "a failed side write is not a lost lease: " + failed);
    assertFalse(db.collection("analyses").document("a1").get().get().exists(), "analysis not written");
    assertEquals("CLAIMED", stored(KEY, EFFECT).getString("state"), "completion not written");
    ledger.release(claim, "billing write failed");
    acquired(ledger.claim(KEY, EFFECT, null));
  }

  @Test
  void failureWhileBuildingTheCommit_writesNothing() throws Exception {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    assertThrows(IllegalStateException.class, () -> ledger.complete(claim, Map.of(), writes -> {
      writes.create(db.collection("analyses").document("a1"), Map.of("key", KEY.value()));
      throw new IllegalStateException("crash between the analysis and the completion");
    }));
    assertFalse(db.collection("analyses").document("a1").get().get().exists());
    assertEquals("CLAIMED", stored(KEY, EFFECT).getString("state"));
  }

  @Test
  void takeoverHolder_completesWithSideWrites_throughItsTokenFence() throws Exception {
    FirestoreLedger shortLeases = ledger(SHORT_LEASE);
    acquired(shortLeases.claim(KEY, EFFECT, null));
    Claim current = takeOverWhenExpired(shortLeases, KEY, EFFECT);
    assertNull(current.writtenAt(), "a takeover is fenced by its token");
    shortLeases.complete(current, Map.of(), writes ->
        writes.create(db.collection("analyses").document("a1"), Map.of("key", KEY.value())));
    assertTrue(db.collection("analyses").document("a1").get().get().exists());
  }

  @Test
  void instanceClockTenMinutesAhead_doesNotTakeOverALiveLease() {
    Duration lease = Duration.ofSeconds(60);
    acquired(ledger(lease).claim(KEY, EFFECT, null));
    InstantSource ahead = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));
    FirestoreLedger skewed = new FirestoreLedger(db, config.withLease(lease), ahead);
    assertInstanceOf(Busy.class, skewed.claim(KEY, EFFECT, null));
  }

  @Test
  void instanceClockTenMinutesBehind_writesALeaseOthersStillSeeLive() throws Exception {
    Duration lease = Duration.ofSeconds(60);
    InstantSource behind = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10));
    FirestoreLedger skewed = new FirestoreLedger(db, config.withLease(lease), behind);
    // Calibrate on an unrelated read first, as a warm instance would be.
    skewed.lookup(IdempotencyKey.of("warm-up"), EFFECT);
    acquired(skewed.claim(KEY, EFFECT, null));
    assertInstanceOf(Busy.class, ledger(lease).claim(KEY, EFFECT, null));
    DocumentSnapshot record = stored(KEY, EFFECT);
    Duration left = Duration.between(Times.instant(record.getReadTime()),
        Times.instant(record.getTimestamp("leaseExpiresAt")));
    assertTrue(left.compareTo(Duration.ofSeconds(50)) > 0 && left.compareTo(Duration.ofSeconds(61)) < 0,
        "the lease runs about 60 s of server time: " + left);
  }

  @ParameterizedTest
  @ValueSource(strings = {"gcs:b/../../etc/passwd#1", "gcs:b/a/b/c//d#2", "gcs:b/факту́ра 請求書 😀.pdf#3",
      "pubsub:__name__", "gcs:b/.#4", "gcs:b/x\u0000y\u001b#5", "/", ".."})
  void awkwardKeys_areStoredUnderAHash_andReadBackExactly(String value) throws Exception {
    IdempotencyKey key = IdempotencyKey.of(value);
    String id = FirestoreLedger.recordId(key, EFFECT);
    assertTrue(id.matches("[0-9a-f]{64}"), id);
    Claim claim = acquired(ledger.claim(key, EFFECT, null));
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertEquals(value, ledger.lookup(key, EFFECT).orElseThrow().key());
    assertEquals(value, stored(key, EFFECT).getString("key"));
  }

  @Test
  void recordIds_differByKeyAndByEffect() {
    assertFalse(FirestoreLedger.recordId(KEY, "analyse").equals(FirestoreLedger.recordId(KEY, "publish")));
    assertFalse(FirestoreLedger.recordId(KEY, "a").equals(
        FirestoreLedger.recordId(IdempotencyKey.of(KEY.value() + "x"), "a")));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Publish", "pub/lish", "a\nb", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
  void badEffectNames_areRejected(String effect) {
    assertThrows(IllegalArgumentException.class, () -> ledger.claim(KEY, effect, null));
  }

  @Test
  void lookup_reportsStateAttemptsLeaseAndError() {
    assertTrue(ledger.lookup(KEY, EFFECT).isEmpty());
    Claim claim = acquired(ledger.claim(KEY, EFFECT, null));
    ledger.release(claim, "boom");
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, record.state());
    assertEquals(1, record.attempts());
    assertEquals("boom", record.error());
    assertFalse(record.leaseLive(), "released");
  }
}
