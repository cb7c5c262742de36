package dev.once.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.ClaimResult.Acquired;
import dev.once.ledger.ClaimResult.AlreadyDone;
import dev.once.ledger.ClaimResult.AlreadyRejected;
import dev.once.ledger.ClaimResult.Busy;
import dev.once.ledger.ClaimResult.FingerprintMismatch;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.NextClaim;
import dev.once.ledger.RecordState;
import dev.once.ledger.SettledClaim;
import dev.once.ledger.Settlement;
import dev.once.ledger.SideWrites;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The store contract's tests: what every ledger must do, run against any store — the ledger's rules over it
 * ({@code Ledgers.over(yourStore, options)}) — so a store of one's own (Redis, Spanner) is checked case by case
 * against the rules the deployed one keeps. This project runs it on Firestore (the emulator) and on
 * {@link InMemoryLedger}. Extend it, and say how to make a ledger on an emptied store and let the store's time pass:
 *
 * <pre>{@code
 * class RedisLedgerTest extends LedgerContract {
 *   protected Ledger ledger(Duration lease) { return Ledgers.over(redisStore, LedgerOptions.defaults().withLease(lease)); }
 *   protected void passTime(Duration duration) { ... }
 * }
 * }</pre>
 */
public abstract class LedgerContract {
  public static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/invoice.pdf#1");
  public static final String EFFECT = "analyse";
  public static final Duration LONG_LEASE = Duration.ofMinutes(10);
  public static final Duration SHORT_LEASE = Duration.ofMillis(1500);

  /** A ledger with this lease, on a store emptied before each test (every call in one test: the same store). */
  protected abstract Ledger ledger(Duration lease);

  /** Lets at least {@code duration} of the store's time pass. */
  protected abstract void passTime(Duration duration);

  /** A document written beside the records, as the store holds it: through the ledger, unless overridden. */
  protected Optional<Map<String, Object>> document(String collection, String id) {
    return Optional.ofNullable(ledger(LONG_LEASE).read(collection, List.of(id)).get(id));
  }

  /** Writes a document outside any claim, as another program would: through the ledger, unless overridden. */
  protected void put(String collection, String id, Map<String, Object> fields) {
    ledger(LONG_LEASE).commit(writes -> writes.set(collection, id, fields));
  }

  private Ledger ledger() {
    return ledger(LONG_LEASE);
  }

  /** The claim, or a failure naming what the ledger answered instead. */
  public static Claim acquired(ClaimResult result) {
    return assertInstanceOf(Acquired.class, result, "expected the claim, got " + result).claim();
  }

  /** The claim of the next delivery once the current lease has run out. */
  private Claim takeOverAfterExpiry(Ledger ledger) {
    passTime(SHORT_LEASE.plusMillis(100));
    return acquired(ledger.claim(KEY, EFFECT));
  }

  @Test
  public void firstClaim_isAcquired_withTokenOne_andALiveLease() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT, "fp"));
    assertEquals(1, claim.token());
    assertEquals(1, claim.attempts());
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, record.state());
    assertEquals(KEY.value(), record.key());
    assertEquals(EFFECT, record.effect());
    assertEquals("fp", record.fingerprint());
    assertTrue(record.leaseLive());
    Duration left = Duration.between(record.readTime(), record.leaseExpiresAt());
    assertTrue(left.compareTo(LONG_LEASE.minusSeconds(30)) > 0 && left.compareTo(LONG_LEASE.plusSeconds(1)) < 0,
        "a lease from the store's time: " + left);
    assertTrue(record.expireAt() != null && record.expireAt().isAfter(record.leaseExpiresAt()), "retention set");
  }

  @Test
  public void secondDelivery_whileFirstInFlight_isBusy() {
    Ledger ledger = ledger();
    acquired(ledger.claim(KEY, EFFECT));
    Busy busy = assertInstanceOf(Busy.class, ledger.claim(KEY, EFFECT));
    assertEquals(1, busy.attempts());
  }

  @Test
  public void secondDelivery_afterCompletion_isDuplicate_withTheStoredOutcome() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of("analysisId", "a1", "pages", 3L), SideWrites.NONE);
    AlreadyDone done = assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT));
    assertEquals(Map.of("analysisId", "a1", "pages", 3L), done.outcome());
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
  }

  /** Written as an Instant or a Date, a time comes back as an Instant wherever it sits: the stores agree. */
  @Test
  public void timesInAResult_andInADocumentBesideIt_comeBackAsInstants_atAnyDepth() {
    Ledger ledger = ledger();
    Instant at = Instant.parse("2026-12-07T03:00:00.123456Z"); // Firestore keeps microseconds, a Date milliseconds
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of("at", at, "nested", Map.of("at", Date.from(at)), "list", List.of(at)),
        writes -> writes.set("notes", "n1", Map.of("nested", Map.of("at", at), "list", List.of(Date.from(at)))));
    AlreadyDone done = assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT));
    Instant millis = at.truncatedTo(ChronoUnit.MILLIS);
    assertEquals(Map.of("at", at, "nested", Map.of("at", millis), "list", List.of(at)), done.outcome());
    assertEquals(Map.of("nested", Map.of("at", at), "list", List.of(millis)),
        ledger.read("notes", List.of("n1")).get("n1"));
  }

  @Test
  public void settle_createsTheRecordDone_withItsOutcome_andLaterClaimsAndSettlesAreDuplicates() {
    Ledger ledger = ledger();
    assertEquals(Optional.empty(), ledger.settle(KEY, "content", Map.of("document", "gcs:inbox/a.pdf#1")),
        "created by this call");
    LedgerRecord record = ledger.lookup(KEY, "content").orElseThrow();
    assertEquals(RecordState.DONE, record.state());
    assertEquals(Map.of("document", "gcs:inbox/a.pdf#1"), record.outcome());
    assertEquals(1, record.attempts());
    assertEquals(0, record.spent(), "nothing ran that could have been paid for");
    assertFalse(record.leaseLive());
    assertTrue(record.expireAt() != null && record.expireAt().isAfter(record.readTime()), "retention set");

    AlreadyDone again = assertInstanceOf(AlreadyDone.class,
        ledger.settle(KEY, "content", Map.of("document", "gcs:inbox/b.pdf#1")).orElseThrow());
    assertEquals(Map.of("document", "gcs:inbox/a.pdf#1"), again.outcome(), "the first one's outcome stands");
    assertEquals(Map.of("document", "gcs:inbox/a.pdf#1"),
        assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, "content")).outcome());
  }

  @Test
  public void settle_ofAClaimedRecord_isBusyWhileItsLeaseIsLive_andTakesItOverAfter() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim first = acquired(ledger.claim(KEY, EFFECT));
    assertInstanceOf(Busy.class, ledger.settle(KEY, EFFECT, Map.of("n", 2L)).orElseThrow());

    passTime(SHORT_LEASE.plusMillis(100));
    Claim taken = acquired(ledger.settle(KEY, EFFECT, Map.of("n", 2L)).orElseThrow());
    assertEquals(first.token() + 1, taken.token(), "taken over, fenced as any takeover");
    ledger.complete(taken, Map.of("n", 2L), SideWrites.NONE);
    assertEquals(Map.of("n", 2L), ledger.lookup(KEY, EFFECT).orElseThrow().outcome());
    assertThrows(LeaseLost.class, () -> ledger.complete(first, Map.of("n", 1L), SideWrites.NONE));
  }

  @Test
  public void settle_ofARejectedRecord_isRejected_andOfAPassedOnOne_isTakenOverForTheNextGeneration() {
    Ledger ledger = ledger();
    ledger.reject(acquired(ledger.claim(KEY, EFFECT)), "refused", SideWrites.NONE);
    assertInstanceOf(AlreadyRejected.class, ledger.settle(KEY, EFFECT, Map.of()).orElseThrow());

    assertEquals(Optional.empty(), ledger.settle(KEY, "content", Map.of("document", "a")));
    assertTrue(ledger.invalidate(KEY, "content", 1, "once", "a refused first document"));
    Claim next = acquired(ledger.settle(KEY, "content", Map.of("document", "b")).orElseThrow());
    assertEquals(2, next.generation());
    ledger.complete(next, Map.of("document", "b"), SideWrites.NONE);
    LedgerRecord passed = ledger.lookup(KEY, "content").orElseThrow();
    assertEquals(Map.of("document", "b"), passed.outcome());
    assertEquals(Map.of("document", "a"), passed.history().get(0).outcome());
  }

  private static final IdempotencyKey CONTENT_KEY = IdempotencyKey.of("content:inbox/application/pdf/ab12");

  private static Settlement naming(String document) {
    return new Settlement(CONTENT_KEY, "content", Map.of("document", document));
  }

  @Test
  public void claimAndSettle_createsTheClaimAndTheSettledRecord_together() {
    Ledger ledger = ledger();
    SettledClaim both = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS, naming(KEY.value()));

    assertTrue(both.settled(), "this call created the settlement's record");
    Claim claim = acquired(both.claim());
    assertEquals(1, claim.token());
    LedgerRecord claimed = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, claimed.state());
    assertTrue(claimed.leaseLive());
    LedgerRecord settled = ledger.lookup(CONTENT_KEY, "content").orElseThrow();
    assertEquals(RecordState.DONE, settled.state());
    assertEquals(Map.of("document", KEY.value()), settled.outcome());
    assertEquals(0, settled.spent(), "nothing ran that could have been paid for");
    assertTrue(settled.expireAt() != null && settled.expireAt().isAfter(settled.readTime()), "retention set");
    ledger.complete(claim, Map.of("n", 1L), SideWrites.NONE);
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state(), "completed by its holder");
  }

  @Test
  public void claimAndSettle_whenTheSettlementsRecordExists_claimsAlone_andLeavesThatRecordAsItWas() {
    Ledger ledger = ledger();
    assertEquals(Optional.empty(), ledger.settle(CONTENT_KEY, "content", Map.of("document", "gcs:inbox/a.pdf#1")));

    SettledClaim both = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS, naming(KEY.value()));

    assertFalse(both.settled());
    assertEquals(1, acquired(both.claim()).token(), "claimed all the same");
    assertEquals(Map.of("document", "gcs:inbox/a.pdf#1"), ledger.lookup(CONTENT_KEY, "content").orElseThrow().outcome(),
        "the first record stands");
  }

  @Test
  public void claimAndSettle_whenTheClaimsRecordExists_settlesNothing_andJudgesTheClaimAsAClaimDoes() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim first = acquired(ledger.claim(KEY, EFFECT));

    SettledClaim busy = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS, naming("b"));
    assertInstanceOf(Busy.class, busy.claim());
    assertFalse(busy.settled());
    assertEquals(Optional.empty(), ledger.lookup(CONTENT_KEY, "content"), "nothing settled beside a held claim");

    passTime(SHORT_LEASE.plusMillis(100));
    SettledClaim taken = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS, naming("c"));
    assertFalse(taken.settled(), "a takeover settles nothing");
    assertEquals(first.token() + 1, acquired(taken.claim()).token());
    assertEquals(Optional.empty(), ledger.lookup(CONTENT_KEY, "content"));
    ledger.complete(acquired(taken.claim()), Map.of("n", 1L), SideWrites.NONE);

    SettledClaim done = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS, naming("d"));
    assertEquals(Map.of("n", 1L), assertInstanceOf(AlreadyDone.class, done.claim()).outcome());
    assertFalse(done.settled());
    assertEquals(Optional.empty(), ledger.lookup(CONTENT_KEY, "content"));
  }

  @Test
  public void rejectedEffect_staysRejected_withItsReason_andItsWrites() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.reject(claim, "content type text/plain is not accepted",
        writes -> writes.merge("analyses", "a1", Map.of("status", "rejected")));
    AlreadyRejected rejected = assertInstanceOf(AlreadyRejected.class, ledger.claim(KEY, EFFECT));
    assertEquals("content type text/plain is not accepted", rejected.reason());
    assertEquals("rejected", document("analyses", "a1").orElseThrow().get("status"));
  }

  @Test
  public void sameKey_withDifferentFingerprint_isConflict_andChangesNothing() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT, "md5:aaa"));
    FingerprintMismatch inFlight = assertInstanceOf(FingerprintMismatch.class, ledger.claim(KEY, EFFECT, "md5:bbb"));
    assertEquals("md5:aaa", inFlight.stored());
    assertEquals("md5:bbb", inFlight.offered());
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertInstanceOf(FingerprintMismatch.class, ledger.claim(KEY, EFFECT, "md5:bbb"));
    assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT, "md5:aaa"));
    assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT), "no fingerprint offered: not compared");
    assertEquals("md5:aaa", ledger.lookup(KEY, EFFECT).orElseThrow().fingerprint());
  }

  @Test
  public void effectsOfOneKey_andKeysOfOneEffect_areIndependent() {
    Ledger ledger = ledger();
    acquired(ledger.claim(KEY, "analyse"));
    acquired(ledger.claim(KEY, "publish"));
    acquired(ledger.claim(IdempotencyKey.of("gcs:inbox/invoice.pdf#2"), "analyse"));
  }

  /**
   * The "live" checks run on long leases, so they hold however slow the store answers (a store on a real clock, an
   * emulator on a loaded machine, can take longer than a short lease between two calls); only the expiry is short.
   */
  @Test
  public void expiredLease_isTakenOver_incrementingTokenAndAttempts() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim first = acquired(ledger(LONG_LEASE).claim(KEY, EFFECT));
    assertInstanceOf(Busy.class, ledger.claim(KEY, EFFECT), "the lease is live at first");
    first = ledger.renew(first, SHORT_LEASE); // its holder shortens it, and then stops renewing
    passTime(SHORT_LEASE.plusMillis(100));
    Claim second = acquired(ledger(LONG_LEASE).claim(KEY, EFFECT));
    assertEquals(first.token() + 1, second.token());
    assertEquals(2, second.attempts());
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(2, record.token());
    assertEquals(2, record.attempts());
    assertTrue(record.leaseLive(), "the new holder's lease is live");
  }

  @Test
  public void staleHolder_cannotCompleteRejectOrRelease_andChangesNothing() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim stale = acquired(ledger.claim(KEY, EFFECT));
    Claim current = takeOverAfterExpiry(ledger);
    LedgerRecord before = ledger.lookup(KEY, EFFECT).orElseThrow();

    LeaseLost lost = assertThrows(LeaseLost.class, () -> ledger.complete(stale, Map.of(), SideWrites.NONE));
    assertTrue(lost.getMessage().contains("token 1"), lost.getMessage());
    assertThrows(LeaseLost.class, () -> ledger.reject(stale, "late", SideWrites.NONE));
    assertThrows(LeaseLost.class, () -> ledger.release(stale, "late"));

    LedgerRecord after = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(before.updatedAt(), after.updatedAt(), "the stale holder wrote nothing");
    assertEquals(RecordState.CLAIMED, after.state());
    assertEquals(2, after.token());
    ledger.complete(current, Map.of("by", "current"), SideWrites.NONE);
    assertEquals(Map.of("by", "current"), ledger.lookup(KEY, EFFECT).orElseThrow().outcome());
  }

  @Test
  public void staleHolder_cannotSlipItsSideWritesIntoTheCommit() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim stale = acquired(ledger.claim(KEY, EFFECT));
    takeOverAfterExpiry(ledger);
    assertThrows(LeaseLost.class, () -> ledger.complete(stale, Map.of(),
        writes -> writes.set("analyses", "a1", Map.of("by", "stale"))));
    assertTrue(document("analyses", "a1").isEmpty());
  }

  @Test
  public void takenOverClaim_canBeTakenOverAgain_andOnlyTheLatestTokenCompletes() {
    Ledger ledger = ledger(SHORT_LEASE);
    acquired(ledger.claim(KEY, EFFECT));
    Claim second = takeOverAfterExpiry(ledger);
    Claim third = takeOverAfterExpiry(ledger);
    assertEquals(3, third.token());
    assertThrows(LeaseLost.class, () -> ledger.complete(second, Map.of(), SideWrites.NONE));
    ledger.complete(third, Map.of(), SideWrites.NONE);
    assertInstanceOf(AlreadyDone.class, ledger.claim(KEY, EFFECT));
  }

  @Test
  public void finishedClaim_cannotBeFinishedTwice() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of("n", 1L), SideWrites.NONE);
    assertThrows(LeaseLost.class, () -> ledger.complete(claim, Map.of("n", 2L), SideWrites.NONE));
    assertThrows(LeaseLost.class, () -> ledger.reject(claim, "late", SideWrites.NONE));
    assertEquals(Map.of("n", 1L), ledger.lookup(KEY, EFFECT).orElseThrow().outcome());
  }

  @Test
  public void release_letsTheNextDeliveryRetryAtOnce_keepingAttemptsAndError() {
    Ledger ledger = ledger();
    Claim first = acquired(ledger.claim(KEY, EFFECT));
    ledger.release(first, "Gemini answered 503");
    Claim retry = acquired(ledger.claim(KEY, EFFECT));
    assertEquals(2, retry.attempts());
    assertEquals(3, retry.token(), "the release moved the token on, the takeover again");
    assertEquals("Gemini answered 503", ledger.lookup(KEY, EFFECT).orElseThrow().error());
    ledger.complete(retry, Map.of(), SideWrites.NONE);
    LedgerRecord done = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.DONE, done.state());
    assertEquals(2, done.attempts());
  }

  /** A release resent after its answer was lost is refused: its writes (a reservation given back) land once. */
  @Test
  public void aReleaseAppliedTwice_isRefusedTheSecondTime_andItsWritesLandOnce() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    SideWrites giveBack = writes -> writes.merge("budget", "d_00", Map.of("reserved", DocumentWrites.increment(-5)));
    ledger.release(claim, "Gemini answered 429", false, giveBack);
    assertThrows(LeaseLost.class, () -> ledger.release(claim, "Gemini answered 429", false, giveBack));
    assertEquals(-5L, ((Number) document("budget", "d_00").orElseThrow().get("reserved")).longValue());
    assertEquals(1, ledger.lookup(KEY, EFFECT).orElseThrow().attempts());
  }

  @Test
  public void renewalAndRelease_moveExpireAt_toTheirOwnTimePlusRetention() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    Instant claimed = ledger.lookup(KEY, EFFECT).orElseThrow().expireAt();
    passTime(Duration.ofMillis(1100));
    claim = ledger.renew(claim, LONG_LEASE);
    Instant renewed = ledger.lookup(KEY, EFFECT).orElseThrow().expireAt();
    assertTrue(renewed.isAfter(claimed.plusSeconds(1)), "renewed: " + claimed + " → " + renewed);
    passTime(Duration.ofMillis(1100));
    ledger.release(claim, "deferred: over the budget", false, SideWrites.NONE);
    Instant released = ledger.lookup(KEY, EFFECT).orElseThrow().expireAt();
    assertTrue(released.isAfter(renewed.plusSeconds(1)), "released: " + renewed + " → " + released);
  }

  @Test
  public void lookup_reportsStateAttemptsLeaseAndError() {
    Ledger ledger = ledger();
    assertTrue(ledger.lookup(KEY, EFFECT).isEmpty());
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.release(claim, "boom");
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, record.state());
    assertEquals(1, record.attempts());
    assertEquals("boom", record.error());
    assertFalse(record.leaseLive(), "released");
    assertInstanceOf(ClaimResult.Expired.class, ClaimResult.settled(record, null), "free to take over");
  }

  @Test
  public void operatorRelease_endsTheLease_recordingWhoWhenAndWhy_andTheNextDeliveryTakesOver() {
    Ledger ledger = ledger();
    acquired(ledger.claim(KEY, EFFECT));
    ledger.forceRelease(KEY, EFFECT, 1, "alice@example.com", "stuck since the outage", true);
    LedgerRecord released = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertFalse(released.leaseLive());
    assertEquals("alice@example.com", released.released().by());
    assertEquals("stuck since the outage", released.released().reason());
    assertFalse(released.released().at().isAfter(released.readTime()));
    assertEquals(2, released.token(), "the release moved the token on");
    Claim next = acquired(ledger.claim(KEY, EFFECT));
    assertEquals(3, next.token());
  }

  @Test
  public void operatorRelease_ofALiveLease_isRefused_unlessEvenIfLive() {
    Ledger ledger = ledger();
    acquired(ledger.claim(KEY, EFFECT));
    assertThrows(LeaseLost.class, () -> ledger.forceRelease(KEY, EFFECT, 1, "bob", "not --live", false));
    LedgerRecord still = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertTrue(still.leaseLive(), "still held");
    assertNull(still.released());
    ledger.forceRelease(KEY, EFFECT, 1, "bob", "--live", true);
    assertFalse(ledger.lookup(KEY, EFFECT).orElseThrow().leaseLive());
  }

  /**
   * An operator's deliberate re-run: the finished run goes to the history with who, when and why; the record is the
   * next generation's claim with no try and its lease over, so the next delivery takes it over (not a duplicate) and
   * runs the effect once more, its claim saying which run it is.
   */
  @Test
  void invalidation_keepsTheFinishedRunInTheHistory_andTheNextDeliveryRunsTheEffectOnceMore() {
    Ledger ledger = ledger();
    ledger.complete(acquired(ledger.claim(KEY, EFFECT, "fp")), Map.of("total", 12L), SideWrites.NONE);
    long token = ledger.lookup(KEY, EFFECT).orElseThrow().token();

    assertTrue(ledger.invalidate(KEY, EFFECT, 1, "alice@example.com", "the prompt missed VAT"));

    LedgerRecord invalidated = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, invalidated.state());
    assertFalse(invalidated.leaseLive(), "the next delivery takes it over at once");
    assertTrue(invalidated.awaitingRerun());
    assertEquals(2, invalidated.generation());
    assertEquals(token + 1, invalidated.token(), "fenced: nothing of the earlier run can write it");
    assertEquals(0, invalidated.attempts());
    assertEquals(List.of(), invalidated.calls());
    assertEquals(Map.of(), invalidated.outcome());
    LedgerRecord.Invalidated run = invalidated.history().get(0);
    assertEquals(1, run.generation());
    assertEquals(RecordState.DONE, run.state());
    assertEquals(Map.of("total", 12L), run.outcome());
    assertEquals("alice@example.com", run.by());
    assertEquals("the prompt missed VAT", run.reason());
    assertFalse(run.at().isAfter(invalidated.readTime()), "by the store's clock");

    Claim again = acquired(ledger.claim(KEY, EFFECT, "fp"));
    assertEquals(2, again.generation());
    assertEquals(1, again.attempts(), "the new run's first try");
    ledger.complete(again, Map.of("total", 13L), SideWrites.NONE);
    LedgerRecord rerun = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.DONE, rerun.state());
    assertEquals(Map.of("total", 13L), rerun.outcome());
    assertEquals(1, rerun.history().size(), "the first run is kept");
    assertInstanceOf(ClaimResult.AlreadyDone.class, ledger.claim(KEY, EFFECT, "fp"), "and only once more");
  }

  @Test
  void invalidation_isRefused_forALiveClaim_oneWaitingForItsRedelivery_anAbsentRecord_andAnotherGeneration() {
    Ledger ledger = ledger(); // a long lease: the claim is live when the invalidation comes, however slow the store
    Claim live = acquired(ledger.claim(KEY, EFFECT));
    assertFalse(ledger.invalidate(KEY, EFFECT, 1, "bob", "live"), "a live claim");
    ledger.release(live, "Gemini answered 503");
    assertFalse(ledger.invalidate(KEY, EFFECT, 1, "bob", "released"), "the next delivery runs it anyway");
    assertFalse(ledger.invalidate(IdempotencyKey.of("gcs:inbox/never.pdf#1"), EFFECT, 1, "bob", "absent"));
    ledger.complete(acquired(ledger.claim(KEY, EFFECT)), Map.of(), SideWrites.NONE);
    assertFalse(ledger.invalidate(KEY, EFFECT, 2, "bob", "read another generation"));
    LedgerRecord unchanged = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(RecordState.DONE, unchanged.state());
    assertEquals(List.of(), unchanged.history());
    assertTrue(ledger.invalidate(KEY, EFFECT, 1, "bob", "done"));
    assertFalse(ledger.invalidate(KEY, EFFECT, 1, "carol", "twice"), "one invalidation per run");
    assertEquals(1, ledger.lookup(KEY, EFFECT).orElseThrow().history().size());
  }

  /** A run given up at its cap of tries is re-run with the cap afresh: the earlier tries belong to the earlier run. */
  @Test
  void invalidation_ofARejectedRun_startsTheNextRunsTriesAfresh() {
    Ledger ledger = ledger();
    ledger.reject(acquired(ledger.claim(KEY, EFFECT)), "gave up after 1 try", true, SideWrites.NONE);
    assertTrue(ledger.invalidate(KEY, EFFECT, 1, "bob", "Gemini's outage is over"));
    Claim again = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS.capped(1)));
    assertFalse(again.exhausted(), "a try of its own");
    LedgerRecord.Invalidated run = ledger.lookup(KEY, EFFECT).orElseThrow().history().get(0);
    assertEquals(RecordState.REJECTED, run.state());
    assertEquals("gave up after 1 try", run.error());
  }

  /** Read expired, renewed by its holder before the release lands: the release is refused, the holder goes on. */
  @Test
  public void operatorRelease_ofALeaseRenewedSinceItWasRead_isRefused() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim holder = acquired(ledger.claim(KEY, EFFECT));
    passTime(SHORT_LEASE.plusMillis(100));
    LedgerRecord read = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertFalse(read.leaseLive(), "what the operator's tool read");
    Claim renewed = ledger.renew(holder, LONG_LEASE);
    assertThrows(LeaseLost.class, () -> ledger.forceRelease(KEY, EFFECT, read.token(), "bob", "expired?", false));
    assertTrue(ledger.lookup(KEY, EFFECT).orElseThrow().leaseLive());
    ledger.complete(renewed, Map.of(), SideWrites.NONE);
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
  }

  /**
   * A renewal applied whose answer was lost (a reset: the client resends it, and the resent one fails its update
   * time): the holder keeps the claim it had, and its next renewal and its completion still hold, by the token.
   */
  @Test
  public void aRenewalAppliedWhoseAnswerWasLost_leavesTheHolderItsClaim() {
    Ledger ledger = ledger();
    Claim holder = acquired(ledger.claim(KEY, EFFECT));
    ledger.renew(holder, LONG_LEASE); // applied; its answer never reached the holder
    Claim renewed = ledger.renew(holder, LONG_LEASE);
    ledger.complete(renewed, Map.of("by", "holder"), SideWrites.NONE);
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
    assertThrows(LeaseLost.class, () -> ledger.complete(holder, Map.of(), SideWrites.NONE), "finished: once only");
  }

  /** A holder that took the claim over (fenced by its token, not its write time) is fenced out by a release too. */
  @Test
  public void aReleasedTakeoverHolder_canNeitherRenewNorComplete() {
    Ledger ledger = ledger(SHORT_LEASE);
    acquired(ledger.claim(KEY, EFFECT));
    Claim second = takeOverAfterExpiry(ledger);
    assertEquals(2, second.token());
    ledger.forceRelease(KEY, EFFECT, 2, "alice", "zombie holder", true);
    assertThrows(LeaseLost.class, () -> ledger.renew(second, LONG_LEASE));
    assertThrows(LeaseLost.class, () -> ledger.complete(second, Map.of(), SideWrites.NONE));
    assertFalse(ledger.lookup(KEY, EFFECT).orElseThrow().leaseLive(), "the release stands");
  }

  @Test
  public void operatorRelease_ofAStaleToken_orAFinishedClaim_isLeaseLost_andChangesNothing() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    assertThrows(LeaseLost.class, () -> ledger.forceRelease(KEY, EFFECT, 7, "bob", "wrong token", true));
    assertTrue(ledger.lookup(KEY, EFFECT).orElseThrow().leaseLive(), "still held");
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertThrows(LeaseLost.class, () -> ledger.forceRelease(KEY, EFFECT, 1, "bob", "too late", true));
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
    assertNull(ledger.lookup(KEY, EFFECT).orElseThrow().released());
  }

  @Test
  public void operatorRelease_racingTheHoldersCompletion_hasExactlyOneWinner() throws Exception {
    Ledger ledger = ledger();
    int keys = 10;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int i = 0; i < keys; i++) {
        IdempotencyKey key = IdempotencyKey.of("gcs:inbox/race-" + i + ".pdf#1");
        Claim claim = acquired(ledger.claim(key, EFFECT));
        CountDownLatch start = new CountDownLatch(1);
        Future<Boolean> completed = pool.submit(() -> {
          start.await();
          try {
            ledger.complete(claim, Map.of("by", "holder"), SideWrites.NONE);
            return true;
          } catch (LeaseLost lost) {
            return false;
          }
        });
        Future<Boolean> released = pool.submit(() -> {
          start.await();
          try {
            ledger.forceRelease(key, EFFECT, claim.token(), "operator", "race", true);
            return true;
          } catch (LeaseLost lost) {
            return false;
          }
        });
        start.countDown();
        boolean holderWon = completed.get(30, TimeUnit.SECONDS);
        boolean operatorWon = released.get(30, TimeUnit.SECONDS);
        assertTrue(holderWon ^ operatorWon, "exactly one wins: holder " + holderWon + ", operator " + operatorWon);
        LedgerRecord record = ledger.lookup(key, EFFECT).orElseThrow();
        assertEquals(holderWon ? RecordState.DONE : RecordState.CLAIMED, record.state());
        assertEquals(operatorWon, record.released() != null);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  public void everyTry_isRecordedBeforeItRuns_andEndsAsItEnded() {
    Ledger ledger = ledger();
    Claim first = acquired(ledger.claim(KEY, EFFECT));
    LedgerRecord claimed = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(List.of(Call.Outcome.RUNNING), outcomes(claimed));
    assertEquals(1, claimed.spent());
    assertEquals(1, claimed.calls().get(0).number());

    ledger.release(first, "Gemini answered 429 RESOURCE_EXHAUSTED", false, SideWrites.NONE);
    Claim second = acquired(ledger.claim(KEY, EFFECT));
    ledger.release(second, "timed out after 60 s", true, SideWrites.NONE);
    Claim third = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(third, Map.of(), SideWrites.NONE);

    LedgerRecord done = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(List.of(Call.Outcome.NOT_PERFORMED, Call.Outcome.FAILED, Call.Outcome.DONE), outcomes(done));
    assertEquals("timed out after 60 s", done.calls().get(1).error());
    assertEquals(2, done.spent(), "a refusal before anything happened does not count; a timeout does");
    assertEquals(3, done.attempts());
  }

  @Test
  public void aHolderThatDied_leavesItsTryAbandoned_andStillCounted() {
    Ledger ledger = ledger(SHORT_LEASE);
    acquired(ledger.claim(KEY, EFFECT));
    takeOverAfterExpiry(ledger);
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(List.of(Call.Outcome.ABANDONED, Call.Outcome.RUNNING), outcomes(record));
    assertEquals(2, record.spent());
  }

  @Test
  public void pastTheCap_theClaimIsHandedOverExhausted_withoutRecordingATry() {
    Ledger ledger = ledger();
    ClaimOptions capped = ClaimOptions.DEFAULTS.capped(2);
    ledger.release(acquired(ledger.claim(KEY, EFFECT, capped)), "reset", true, SideWrites.NONE);
    ledger.release(acquired(ledger.claim(KEY, EFFECT, capped)), "503 before generation", false, SideWrites.NONE);
    Claim third = acquired(ledger.claim(KEY, EFFECT, capped));
    assertFalse(third.exhausted(), "the refusal did not count: one try spent of two");
    ledger.release(third, "timed out", true, SideWrites.NONE);

    Claim fourth = acquired(ledger.claim(KEY, EFFECT, capped));

    assertTrue(fourth.exhausted());
    assertEquals("timed out", fourth.lastError());
    assertEquals(2, fourth.spent());
    assertEquals(7, fourth.token(), "each of three releases and each of four claims moved it on");
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(3, record.calls().size(), "no try recorded for the exhausted claim");
    ledger.reject(fourth, "gave up after 2 tries", SideWrites.NONE);
    assertInstanceOf(AlreadyRejected.class, ledger.claim(KEY, EFFECT, capped));
  }

  @Test
  public void theRecord_keepsTheLatestTries_andCountsThemAll() {
    Ledger ledger = ledger();
    for (int i = 0; i < 14; i++) {
      ledger.release(acquired(ledger.claim(KEY, EFFECT)), "try " + (i + 1), true, SideWrites.NONE);
    }
    LedgerRecord record = ledger.lookup(KEY, EFFECT).orElseThrow();
    assertEquals(10, record.calls().size());
    assertEquals(5, record.calls().get(0).number());
    assertEquals(14, record.spent());
    assertEquals(14, record.attempts());
  }

  @Test
  public void renewal_extendsTheLease_andTheHolderStillFinishes_whileAStaleHoldersRenewalIsRefused() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim first = acquired(ledger.claim(KEY, EFFECT));
    Claim renewed = ledger.renew(first, Duration.ofMinutes(5));
    passTime(SHORT_LEASE.plusMillis(100));
    assertInstanceOf(Busy.class, ledger.claim(KEY, EFFECT), "renewed: still held past the first lease");
    assertEquals(Duration.ofMinutes(5), renewed.lease());
    ledger.complete(renewed, Map.of("by", "renewed"), SideWrites.NONE);
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
    assertThrows(LeaseLost.class, () -> ledger.renew(first, Duration.ofMinutes(5)), "a finished claim is not renewed");
  }

  @Test
  public void aLeaseNeeded_longerThanTheConfiguredOne_isTheOneWritten() {
    Ledger ledger = ledger(SHORT_LEASE);
    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS.withLease(Duration.ofMinutes(3))));
    assertEquals(Duration.ofMinutes(3), claim.lease());
    passTime(SHORT_LEASE.plusMillis(100));
    assertInstanceOf(Busy.class, ledger.claim(KEY, EFFECT));
  }

  @Test
  public void completion_claimsTheNextEffect_inTheSameCommit() {
    Ledger ledger = ledger();
    Claim analyse = acquired(ledger.claim(KEY, EFFECT));
    Claim publish = ledger.complete(analyse, Map.of("status", "analysed"), SideWrites.NONE, NextClaim.of("publish"))
        .orElseThrow();
    assertEquals("publish", publish.effect());
    assertEquals(1, publish.token());
    assertInstanceOf(Busy.class, ledger.claim(KEY, "publish"), "claimed by the completing commit");
    ledger.complete(publish, Map.of("messageId", "m-1"), SideWrites.NONE);
    assertEquals(RecordState.DONE, ledger.lookup(KEY, "publish").orElseThrow().state());
  }

  @Test
  public void completion_whoseNextEffectExists_commitsAlone() {
    Ledger ledger = ledger();
    Claim publishedBefore = acquired(ledger.claim(KEY, "publish"));
    Claim analyse = acquired(ledger.claim(KEY, EFFECT));
    assertTrue(ledger.complete(analyse, Map.of(), SideWrites.NONE, NextClaim.of("publish")).isEmpty());
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
    assertEquals(publishedBefore.token(), ledger.lookup(KEY, "publish").orElseThrow().token(), "left as it was");
  }

  private static List<Call.Outcome> outcomes(LedgerRecord record) {
    return record.calls().stream().map(Call::outcome).toList();
  }

  @Test
  public void sideWrites_landWithTheCompletion() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of("analysisId", "a1"), writes -> {
      writes.create("analyses", "a1", Map.of("key", KEY.value()));
      writes.create("billing", "a1", Map.of("key", KEY.value(), "tokens", 10L));
    });
    assertEquals(KEY.value(), document("analyses", "a1").orElseThrow().get("key"));
    assertEquals(10L, document("billing", "a1").orElseThrow().get("tokens"));
    assertEquals(RecordState.DONE, ledger.lookup(KEY, EFFECT).orElseThrow().state());
  }

  @Test
  public void mergedSideWrites_keepOtherFields_resolveServerTime_andAddIncrements() {
    put("analyses", "a1",
        Map.of("key", KEY.value(), "status", "submitted", "source", Map.of("bucket", "b", "size", 3L)));
    put("budget", "day", Map.of("spent", 5L));
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    ledger.complete(claim, Map.of(), writes -> {
      writes.merge("analyses", "a1", Map.of("status", "analysed", "updatedAt", DocumentWrites.serverTime(),
          "source", Map.of("name", "n")));
      writes.merge("budget", "day", Map.of("spent", DocumentWrites.increment(7)));
    });
    Map<String, Object> analysis = document("analyses", "a1").orElseThrow();
    assertEquals("analysed", analysis.get("status"));
    assertEquals(KEY.value(), analysis.get("key"), "a merge keeps the other fields");
    assertEquals(Map.of("bucket", "b", "size", 3L, "name", "n"), analysis.get("source"),
        "nested maps merge field by field");
    assertInstanceOf(Instant.class, analysis.get("updatedAt"), "the commit's time");
    assertEquals(12L, document("budget", "day").orElseThrow().get("spent"));
  }

  @Test
  public void sum_addsUpWholeNumbersOverTheDocumentsNamed_missingOnesAndOnesLackingAFieldAddingNothing() {
    Ledger ledger = ledger();
    String day = "2026-12-07";
    put("counters", "c1", Map.of("day", day, "spent", 5L, "reserved", 7L));
    put("counters", "c2", Map.of("day", day, "spent", 11L, "reserved", 0L));
    put("counters", "c3", Map.of("day", "2026-12-06", "spent", 1_000L, "reserved", 1_000L)); // another day
    put("counters", "c4", Map.of("day", day, "spent", 100L)); // lacks a field: left out of both sums
    put("counters", "m1", Map.of("day", day)); // a marker beside them
    ledger.commit(writes -> writes.merge("counters", "c1", Map.of("spent", DocumentWrites.increment(-2))));
    List<String> ids = List.of("c1", "c2", "c4", "absent");

    assertEquals(Map.of("spent", 14L, "reserved", 7L), ledger.sum("counters", ids, "day", day,
        List.of("spent", "reserved")));
    assertEquals(Map.of("spent", 114L), ledger.sum("counters", ids, "day", day, List.of("spent")));
    assertEquals(Map.of("spent", 0L), ledger.sum("counters", List.of("absent"), "day", "2026-12-08", List.of("spent")));
  }

  @Test
  public void read_answersTheDocumentsThatExist_byIdInOneCall() {
    put("budget", "d_01", Map.of("spent", 5L));
    put("budget", "d_03", Map.of("spent", 7L, "day", "d"));
    Map<String, Map<String, Object>> found = ledger().read("budget", List.of("d_01", "d_02", "d_03"));
    assertEquals(Set.of("d_01", "d_03"), found.keySet(), "absent ones left out");
    assertEquals(7L, found.get("d_03").get("spent"));
    assertEquals("d", found.get("d_03").get("day"));
    assertEquals(Map.of(), ledger().read("budget", List.of()));
  }

  @Test
  public void commit_outsideAnyClaim_isAtomic_andConcurrentIncrementsAllAddUp() throws Exception {
    Ledger ledger = ledger();
    int threads = 16;
    int each = 10;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        running.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < each; i++) {
            ledger.commit(writes -> {
              writes.merge("budget", "d_00", Map.of("reserved", DocumentWrites.increment(3), "day", "d"));
              writes.merge("budget", "d_01", Map.of("reserved", DocumentWrites.increment(-1)));
            });
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> task : running) {
        task.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(3L * threads * each, document("budget", "d_00").orElseThrow().get("reserved"), "no increment lost");
    assertEquals(-1L * threads * each, document("budget", "d_01").orElseThrow().get("reserved"));

    put("budget", "d_02", Map.of("spent", 1L));
    assertThrows(RuntimeException.class, () -> ledger.commit(writes -> {
      writes.merge("budget", "d_02", Map.of("spent", DocumentWrites.increment(5)));
      writes.create("budget", "d_00", Map.of()); // exists: the whole commit fails
    }));
    assertEquals(1L, document("budget", "d_02").orElseThrow().get("spent"), "nothing of a failed commit lands");
  }

  @Test
  public void now_isTheStoresTime_evenBeforeAnyOtherCall() {
    Instant now = ledger().now();
    assertTrue(now.isAfter(Instant.parse("2020-01-01T00:00:00Z")), "the store's time: " + now);
  }

  @Test
  public void failingSideWrite_leavesNeitherTheWritesNorTheCompletion() {
    put("billing", "a1", Map.of("already", true));
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    RuntimeException failed = assertThrows(RuntimeException.class, () -> ledger.complete(claim, Map.of(), writes -> {
      writes.create("analyses", "a1", Map.of("key", KEY.value()));
      writes.create("billing", "a1", Map.of("key", KEY.value())); // exists: the commit fails
    }));
    assertFalse(failed instanceof LeaseLost, "a failed side write is not a lost lease: " + failed);
    assertTrue(document("analyses", "a1").isEmpty(), "analysis not written");
    assertEquals(RecordState.CLAIMED, ledger.lookup(KEY, EFFECT).orElseThrow().state(), "completion not written");
    ledger.release(claim, "billing write failed");
    acquired(ledger.claim(KEY, EFFECT));
  }

  @Test
  public void valueTheStoreHasNoTypeFor_isAnIllegalArgument_andNothingIsWritten() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    assertThrows(IllegalArgumentException.class, () -> ledger.complete(claim,
        Map.of("total", new BigInteger("10").pow(30)), SideWrites.NONE));
    assertThrows(IllegalArgumentException.class, () -> ledger.complete(claim, Map.of(),
        writes -> writes.set("analyses", "a1", Map.of("total", BigInteger.TWO.pow(70)))));
    assertTrue(document("analyses", "a1").isEmpty());
    assertEquals(RecordState.CLAIMED, ledger.lookup(KEY, EFFECT).orElseThrow().state());
  }

  @Test
  public void failureWhileBuildingTheCommit_writesNothing() {
    Ledger ledger = ledger();
    Claim claim = acquired(ledger.claim(KEY, EFFECT));
    assertThrows(IllegalStateException.class, () -> ledger.complete(claim, Map.of(), writes -> {
      writes.create("analyses", "a1", Map.of("key", KEY.value()));
      throw new IllegalStateException("crash between the analysis and the completion");
    }));
    assertTrue(document("analyses", "a1").isEmpty());
    assertEquals(RecordState.CLAIMED, ledger.lookup(KEY, EFFECT).orElseThrow().state());
  }

  @Test
  public void takeoverHolder_completesWithSideWrites_throughItsTokenFence() {
    Ledger ledger = ledger(SHORT_LEASE);
    acquired(ledger.claim(KEY, EFFECT));
    Claim current = takeOverAfterExpiry(ledger);
    assertNull(current.writtenAt(), "a takeover is fenced by its token");
    ledger.complete(current, Map.of(), writes -> writes.create("analyses", "a1", Map.of("key", KEY.value())));
    assertTrue(document("analyses", "a1").isPresent());
  }

  @ParameterizedTest
  @ValueSource(strings = {"gcs:b/../../etc/passwd#1", "gcs:b/a/b/c//d#2", "gcs:b/факту́ра 請求書 😀.pdf#3",
      "pubsub:__name__", "gcs:b/.#4", "gcs:b/x\u0000y\u001b#5", "/", ".."})
  public void awkwardKeys_areStoredUnderAHash_andReadBackExactly(String value) {
    Ledger ledger = ledger();
    IdempotencyKey key = IdempotencyKey.of(value);
    Claim claim = acquired(ledger.claim(key, EFFECT));
    assertTrue(claim.recordId().matches("[0-9a-f]{64}"), claim.recordId());
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertEquals(value, ledger.lookup(key, EFFECT).orElseThrow().key());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Publish", "pub/lish", "a\nb",
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})
  public void badEffectNames_areRejected(String effect) {
    assertThrows(IllegalArgumentException.class, () -> ledger().claim(KEY, effect));
  }
}
