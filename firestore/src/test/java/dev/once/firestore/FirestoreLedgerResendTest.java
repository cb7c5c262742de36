package dev.once.firestore;

import static dev.once.testing.LedgerContract.acquired;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.Firestore;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.NextClaim;
import dev.once.ledger.RecordState;
import dev.once.ledger.SettledClaim;
import dev.once.ledger.Settlement;
import dev.once.ledger.SideWrites;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every write of the ledger with its answer lost on the wire ({@link LostAnswers}: the emulator carries the call out,
 * the client hears {@code UNAVAILABLE}, which it resends a commit on, or {@code DEADLINE_EXCEEDED}, which it does not),
 * against the real client and the emulator. Each case asserts what went over the wire and the record afterwards.
 */
class FirestoreLedgerResendTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/resent.pdf#1");
  private static final String EFFECT = "analyse";
  private static final String COMMIT = "Commit";
  private static final String AGGREGATE = "RunAggregationQuery";
  private static final String GET = "BatchGetDocuments";
  private static final Duration SHORT_LEASE = Duration.ofMillis(1500);
  /** How a write's answer is lost: once and twice to UNAVAILABLE (the client resends), once late (it does not). */
  private static final List<List<Status.Code>> LOSSES = List.of(List.of(Status.Code.UNAVAILABLE),
      List.of(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE), List.of(Status.Code.DEADLINE_EXCEEDED));
  /**
   * What each of {@link #LOSSES} costs a holder's one-write commit (fenced by its update time): resent until its
   * precondition fails, then one token transaction finds the nonce; late, not resent.
   */
  private static final List<String> ONE_WRITE = List.of("3 commits, 1 transactions", "4 commits, 1 transactions",
      "2 commits, 1 transactions");
  private static final LostAnswers faults = new LostAnswers();
  private static final Firestore lossy = LostAnswers.client(faults);

  private final LedgerOptions config = LedgerOptions.defaults();
  private final FirestoreLedger ledger = new FirestoreLedger(lossy, config);
  /** Another instance, whose answers all arrive: for the setting up and the looking. */
  private final FirestoreLedger other = new FirestoreLedger(TestFirestore.client(), config);

  @BeforeEach
  void clear() {
    faults.stop();
    TestFirestore.clear();
    other.now();
    ledger.now(); // calibrated, so a claim is the create alone
  }

  @AfterAll
  static void close() throws Exception {
    lossy.close();
  }

  private int commits() {
    return faults.calls(COMMIT);
  }

  /** What went over the wire since {@code before} (from {@link #onTheWire()}): commits and transactions begun. */
  private String since(int[] before) {
    int[] now = onTheWire();
    return (now[0] - before[0]) + " commits, " + (now[1] - before[1]) + " transactions";
  }

  private int[] onTheWire() {
    return new int[] {commits(), faults.calls("BeginTransaction")};
  }

  private LedgerRecord record(String effect) {
    return other.lookup(KEY, effect).orElseThrow();
  }

  private static List<Call.Outcome> outcomes(LedgerRecord record) {
    return record.calls().stream().map(Call::outcome).toList();
  }

  /** A record whose first holder's lease has run out: the next claim is a takeover. */
  private void expiredClaim() {
    expiredClaims(KEY);
  }

  private void expiredClaims(IdempotencyKey... keys) {
    FirestoreLedger shortLeases = new FirestoreLedger(TestFirestore.client(), config.withLease(SHORT_LEASE));
    for (IdempotencyKey key : keys) {
      acquired(shortLeases.claim(key, EFFECT));
    }
    TestFirestore.passTime(SHORT_LEASE.plusMillis(100));
  }

  private void assertFirstClaim(Claim claim) {
    assertEquals(1, claim.token());
    assertEquals(1, claim.attempts());
    assertEquals(1, claim.spent());
    LedgerRecord record = record(EFFECT);
    assertEquals(RecordState.CLAIMED, record.state());
    assertEquals(1, record.token());
    assertEquals(1, record.attempts());
    assertEquals(1, record.spent(), "one try that may have run, not a phantom second");
    assertEquals(List.of(Call.Outcome.RUNNING), outcomes(record));
  }

  @Test
  void aClaimWhoseAnswerIsLostOnce_isResent_andRecognisedAsTheClaimersOwn() {
    int before = commits();
    faults.loseNext(COMMIT, 1, Status.Code.UNAVAILABLE);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals(2, commits() - before, "the create, and the client's resend of it (ALREADY_EXISTS)");
    assertFirstClaim(claim);
    ledger.complete(claim, Map.of("n", 1L), SideWrites.NONE);
    assertEquals(RecordState.DONE, record(EFFECT).state(), "its holder completes it, fenced by its update time");
  }

  @Test
  void aClaimWhoseAnswerIsLostTwice_isStillTheClaimersOwn() {
    int before = commits();
    faults.loseNext(COMMIT, 2, Status.Code.UNAVAILABLE);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals(3, commits() - before);
    assertFirstClaim(claim);
  }

  @Test
  void aClaimWhoseAnswerIsLate_isNotResent_andOneReadFindsItTheClaimersOwn() {
    int before = commits();
    faults.loseNext(COMMIT, 1, Status.Code.DEADLINE_EXCEEDED);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals(1, commits() - before, "the client does not resend a commit on DEADLINE_EXCEEDED");
    assertFirstClaim(claim);
  }

  @Test
  void aSettleWhoseAnswerIsLost_isResent_andRecognisedAsTheSettlersOwn() {
    for (Status.Code lost : List.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED)) {
      TestFirestore.clear();
      int before = commits();
      faults.loseNext(COMMIT, 1, lost);

      assertEquals(Optional.empty(), ledger.settle(KEY, "content", Map.of("document", "a")),
          lost + ": this call's own create, not another's");

      assertEquals(lost == Status.Code.UNAVAILABLE ? 2 : 1, commits() - before, lost + ": the create, and its resend");
      assertEquals(Map.of("document", "a"), record("content").outcome());
    }
  }

  @Test
  void aSum_isOneAggregation_andOnceTheDatabaseRefusesIt_forWantOfAnIndex_isReadDocumentByDocument() {
    other.commit(writes -> writes.set("counters", "c1", Map.of("day", "d", "spent", 5L, "reserved", 7L)));
    other.commit(writes -> writes.set("counters", "c2", Map.of("day", "d", "spent", 1L, "reserved", 2L)));
    List<String> ids = List.of("c1", "c2", "c3");
    Map<String, Long> expected = Map.of("spent", 6L, "reserved", 9L);
    int aggregations = faults.calls(AGGREGATE);
    int gets = faults.calls(GET);

    assertEquals(expected, ledger.sum("counters", ids, "day", "d", List.of("spent", "reserved")));
    assertEquals(List.of(1, 0), List.of(faults.calls(AGGREGATE) - aggregations, faults.calls(GET) - gets),
        "one aggregation, no read");

    faults.loseNext(AGGREGATE, 1, Status.Code.FAILED_PRECONDITION);
    assertEquals(expected, ledger.sum("counters", ids, "day", "d", List.of("spent", "reserved")), "read instead");
    assertEquals(expected, ledger.sum("counters", ids, "day", "d", List.of("spent", "reserved")));
    assertEquals(List.of(2, 2), List.of(faults.calls(AGGREGATE) - aggregations, faults.calls(GET) - gets),
        "refused once for want of its index, then not asked again for a while: the documents read");
  }

  @Test
  void aClaimAndSettleWhoseAnswerIsLost_isResent_andBothRecordsAreTheCallersOwn() {
    IdempotencyKey content = IdempotencyKey.of("content:inbox/application/pdf/ab12");
    for (Status.Code lost : List.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED)) {
      TestFirestore.clear();
      int before = commits();
      faults.loseNext(COMMIT, 1, lost);

      SettledClaim both = ledger.claimAndSettle(KEY, EFFECT, ClaimOptions.DEFAULTS,
          new Settlement(content, "content", Map.of("document", KEY.value())));

      assertEquals(lost == Status.Code.UNAVAILABLE ? 2 : 1, commits() - before,
          lost + ": one commit for both records, and the client's resend of it");
      assertTrue(both.settled(), lost + ": this call's own settlement, not another's");
      assertFirstClaim(acquired(both.claim()));
      assertEquals(Map.of("document", KEY.value()), ledger.lookup(content, "content").orElseThrow().outcome());
    }
  }

  @Test
  void aTakeoverWhoseTransactionsCommitAnswerIsLost_isResent_andTheTakersOwn_withOneTryMore() {
    expiredClaim();
    int before = commits();
    // The create meets the record (ALREADY_EXISTS) and is let through; the takeover's commit loses its answer, the
    // client resends it, and the emulator calls the transaction closed (INVALID_ARGUMENT), which the runner does not
    // retry: the record bearing the takeover's nonce says it was applied.
    faults.letThrough(COMMIT, 1).loseNext(COMMIT, 1, Status.Code.UNAVAILABLE);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals(3, commits() - before, "the create, the takeover's commit and its resend");
    assertTakenOverOnce(claim);
  }

  @Test
  void aTakeoverWhoseTransactionsCommitAnswerIsLostTwice_isResentTwice_andTheTakersOwn() {
    expiredClaim();
    int[] before = onTheWire();
    faults.letThrough(COMMIT, 1).loseNext(COMMIT, 2, Status.Code.UNAVAILABLE);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals("4 commits, 1 transactions", since(before), "the create, the takeover's commit and two resends");
    assertTakenOverOnce(claim);
  }

  @Test
  void aTakeoverWhoseCommitAnswerIsLostTwice_theLastLate_runsItsBodyAgain_andIsTheTakersOwn() {
    expiredClaim();
    int before = commits();
    int begun = faults.calls("BeginTransaction");
    faults.letThrough(COMMIT, 1).loseNext(COMMIT, 1, Status.Code.UNAVAILABLE)
        .loseNext(COMMIT, 1, Status.Code.DEADLINE_EXCEEDED);

    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));

    assertEquals(2, faults.calls("BeginTransaction") - begun, "DEADLINE_EXCEEDED: the runner runs the body again");
    assertEquals(4, commits() - before, "the create, the commit, its resend, and the second run's (empty) commit");
    assertTakenOverOnce(claim);
  }

  private void assertTakenOverOnce(Claim claim) {
    assertEquals(2, claim.token());
    assertEquals(2, claim.attempts());
    assertEquals(2, claim.spent());
    LedgerRecord record = record(EFFECT);
    assertEquals(2, record.token(), "taken over once");
    assertEquals(2, record.attempts());
    assertEquals(2, record.spent());
    assertEquals(List.of(Call.Outcome.ABANDONED, Call.Outcome.RUNNING), outcomes(record));
    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertEquals(RecordState.DONE, record(EFFECT).state(), "the taker completes it, fenced by its token");
  }

  @Test
  void aRenewalWhoseAnswerIsLost_keepsTheClaim_withTheLongerLease_andRetentionFromIt() {
    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));
    LedgerRecord claimed = record(EFFECT);
    // Resent, the one-write renewal fails its update-time precondition and the token transaction finds its nonce;
    // the claim is fenced by its token from then on: lost twice, the transaction's commit is resent twice and
    // refused as closed, then one read finds the nonce; late, the transaction's body runs again.
    List<String> wire = List.of("3 commits, 1 transactions", "3 commits, 1 transactions", "2 commits, 2 transactions");
    for (int i = 0; i < LOSSES.size(); i++) {
      int[] before = onTheWire();
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));
      claim = ledger.renew(claim, Duration.ofMinutes(20));
      assertEquals(wire.get(i), since(before), LOSSES.get(i).toString());
    }
    LedgerRecord renewed = record(EFFECT);
    assertEquals(1, renewed.token());
    assertTrue(Duration.between(renewed.readTime(), renewed.leaseExpiresAt()).toMinutes() >= 19);
    assertTrue(renewed.expireAt().isAfter(claimed.expireAt()), "expireAt moves with the last write");

    ledger.complete(claim, Map.of(), SideWrites.NONE);
    assertEquals(RecordState.DONE, record(EFFECT).state());
  }

  /** A side write that counts how often it was applied. */
  private static SideWrites counted(String id) {
    return writes -> writes.merge("billing", id, Map.of("applied", DocumentWrites.increment(1)));
  }

  private long applied(String id) {
    return ((Number) other.read("billing", List.of(id)).get(id).get("applied")).longValue();
  }

  @Test
  void aCompletionWithSideWritesAndAChainedClaim_answerLostOnceTwiceOrLate_landsOnce_andHandsOverTheNextClaim() {
    for (int i = 0; i < LOSSES.size(); i++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/chained-" + i + ".pdf#1");
      Claim claim = acquired(ledger.claim(key, EFFECT, ClaimOptions.DEFAULTS));
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));
      int[] before = onTheWire();

      Claim next = ledger.complete(claim, Map.of("status", "analysed"), counted("bill-" + i), NextClaim.of("publish"))
          .orElseThrow(() -> new AssertionError("the chained claim is this holder's"));

      assertEquals(ONE_WRITE.get(i), since(before), LOSSES.get(i).toString());

      LedgerRecord done = other.lookup(key, EFFECT).orElseThrow();
      assertEquals(RecordState.DONE, done.state(), LOSSES.get(i).toString());
      assertEquals(1, done.token());
      assertEquals(List.of(Call.Outcome.DONE), outcomes(done));
      assertEquals(1, applied("bill-" + i), "the side write landed once: " + LOSSES.get(i));
      LedgerRecord publish = other.lookup(key, "publish").orElseThrow();
      assertEquals(RecordState.CLAIMED, publish.state());
      assertEquals(1, publish.token());
      assertEquals(1, publish.attempts());
      assertEquals(done.updatedAt(), publish.createdAt(),
          "one commit, one time (what Once.releaseFollowing relies on)");
      ledger.complete(next, Map.of(), SideWrites.NONE);
      assertEquals(RecordState.DONE, other.lookup(key, "publish").orElseThrow().state(), "its holder completes it");
    }
  }

  @Test
  void aTakenOverClaimsCompletion_itsTransactionsCommitAnswerLost_landsOnce() {
    expiredClaim();
    Claim claim = acquired(ledger.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));
    faults.loseNext(COMMIT, 1, Status.Code.UNAVAILABLE).loseNext(COMMIT, 1, Status.Code.DEADLINE_EXCEEDED);
    int[] before = onTheWire();

    ledger.complete(claim, Map.of(), counted("bill"), null);

    assertEquals("3 commits, 2 transactions", since(before), "the commit, its resend, the body run again");

    assertEquals(RecordState.DONE, record(EFFECT).state());
    assertEquals(2, record(EFFECT).token());
    assertEquals(1, applied("bill"));
  }

  @Test
  void aTakenOverClaimsRejectionAndRelease_theirTransactionsCommitAnswersLost_landOnce() {
    IdempotencyKey refused = IdempotencyKey.of("gcs:inbox/refused-taken.pdf#1");
    IdempotencyKey released = IdempotencyKey.of("gcs:inbox/released-taken.pdf#1");
    expiredClaims(refused, released);
    Claim toRefuse = acquired(ledger.claim(refused, EFFECT, ClaimOptions.DEFAULTS));
    Claim toRelease = acquired(ledger.claim(released, EFFECT, ClaimOptions.DEFAULTS));
    List<LedgerRecord> taken = List.of(other.lookup(refused, EFFECT).orElseThrow(),
        other.lookup(released, EFFECT).orElseThrow());

    faults.loseNext(COMMIT, 1, Status.Code.UNAVAILABLE).loseNext(COMMIT, 1, Status.Code.DEADLINE_EXCEEDED);
    int[] before = onTheWire();
    ledger.reject(toRefuse, "not an invoice", counted("refused-taken"));
    assertEquals("3 commits, 2 transactions", since(before), "the commit, its resend, the body run again");

    faults.loseNext(COMMIT, 1, Status.Code.UNAVAILABLE).loseNext(COMMIT, 1, Status.Code.DEADLINE_EXCEEDED);
    before = onTheWire();
    ledger.release(toRelease, "deferred: over the budget", false, counted("released-taken"));
    assertEquals("3 commits, 2 transactions", since(before), "the commit, its resend, the body run again");

    LedgerRecord rejected = other.lookup(refused, EFFECT).orElseThrow();
    assertEquals(RecordState.REJECTED, rejected.state());
    assertEquals(2, rejected.token());
    assertEquals(2, rejected.attempts());
    assertEquals(2, rejected.spent());
    assertEquals(List.of(Call.Outcome.ABANDONED, Call.Outcome.REJECTED), outcomes(rejected));
    assertEquals(1, applied("refused-taken"));
    assertTrue(rejected.expireAt().isAfter(taken.get(0).expireAt()));
    LedgerRecord given = other.lookup(released, EFFECT).orElseThrow();
    assertEquals(RecordState.CLAIMED, given.state());
    assertEquals(3, given.token(), "moved on once by the release");
    assertEquals(2, given.attempts());
    assertEquals(1, given.spent(), "the try not performed is not counted");
    assertEquals(List.of(Call.Outcome.ABANDONED, Call.Outcome.NOT_PERFORMED), outcomes(given));
    assertTrue(!given.leaseLive());
    assertEquals(1, applied("released-taken"));
    assertTrue(given.expireAt().isAfter(taken.get(1).expireAt()));
  }

  @Test
  void aRejectionWhoseAnswerIsLostOnceTwiceOrLate_landsOnce_andIsNotALostLease() {
    for (int i = 0; i < LOSSES.size(); i++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/refused-" + i + ".pdf#1");
      Claim claim = acquired(ledger.claim(key, EFFECT, ClaimOptions.DEFAULTS));
      LedgerRecord claimed = other.lookup(key, EFFECT).orElseThrow();
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));
      int[] before = onTheWire();

      ledger.reject(claim, "not an invoice", counted("refused-" + i));

      String how = LOSSES.get(i).toString();
      assertEquals(ONE_WRITE.get(i), since(before), how);
      LedgerRecord rejected = other.lookup(key, EFFECT).orElseThrow();
      assertEquals(RecordState.REJECTED, rejected.state(), how);
      assertEquals("not an invoice", rejected.error());
      assertEquals(1, rejected.token());
      assertEquals(1, rejected.attempts());
      assertEquals(1, rejected.spent());
      assertEquals(List.of(Call.Outcome.REJECTED), outcomes(rejected));
      assertEquals(1, applied("refused-" + i), "its writes landed once: " + how);
      assertTrue(rejected.expireAt().isAfter(claimed.expireAt()), "expireAt moves with the rejection: " + how);
    }
  }

  @Test
  void aReleaseWhoseAnswerIsLostOnceTwiceOrLate_landsOnce_andIsNotALostLease() {
    for (int i = 0; i < LOSSES.size(); i++) {
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/released-" + i + ".pdf#1");
      Claim claim = acquired(ledger.claim(key, EFFECT, ClaimOptions.DEFAULTS));
      LedgerRecord claimed = other.lookup(key, EFFECT).orElseThrow();
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));
      int[] before = onTheWire();

      ledger.release(claim, "deferred: over the budget", false, counted("given-back-" + i));

      String how = LOSSES.get(i).toString();
      assertEquals(ONE_WRITE.get(i), since(before), how);
      LedgerRecord released = other.lookup(key, EFFECT).orElseThrow();
      assertEquals(RecordState.CLAIMED, released.state());
      assertEquals(2, released.token(), "moved on once: " + how);
      assertEquals(1, released.attempts());
      assertEquals(0, released.spent(), "a try not performed is not counted");
      assertEquals(List.of(Call.Outcome.NOT_PERFORMED), outcomes(released));
      assertTrue(!released.leaseLive());
      assertEquals(1, applied("given-back-" + i), "its writes landed once: " + how);
      assertTrue(released.expireAt().isAfter(claimed.expireAt()), "expireAt moves with the release: " + how);
    }
  }

  @Test
  void anOperatorsReleaseWhoseAnswerIsLostOnceTwiceOrLate_isDone_notRefused() {
    acquired(other.claim(KEY, EFFECT, ClaimOptions.DEFAULTS));
    // Resent, the transaction's commit is refused as closed and one read finds the nonce; late, the body runs again.
    List<String> wire = List.of("2 commits, 1 transactions", "3 commits, 1 transactions", "2 commits, 2 transactions");
    for (int i = 0; i < LOSSES.size(); i++) {
      LedgerRecord before = record(EFFECT);
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));
      int[] sent = onTheWire();

      ledger.forceRelease(KEY, EFFECT, before.token(), "ops@example.com", "stuck " + i, true);

      String how = LOSSES.get(i).toString();
      assertEquals(wire.get(i), since(sent), how);
      LedgerRecord released = record(EFFECT);
      assertEquals(before.token() + 1, released.token(), "moved on once: " + how);
      assertEquals(1, released.attempts(), "an operator's release is not a try");
      assertEquals(1, released.spent());
      assertEquals(List.of(Call.Outcome.RUNNING), outcomes(released), "the holder's try, left as it was");
      assertEquals("ops@example.com", released.released().by());
      assertEquals("stuck " + i, released.released().reason());
      assertTrue(!released.leaseLive());
      assertTrue(released.expireAt().isAfter(before.expireAt()), "expireAt moves with the release: " + how);
    }
  }

  @Test
  void anInvalidationWhoseAnswerIsLostOnceTwiceOrLate_isDone_once() {
    for (int i = 0; i < LOSSES.size(); i++) {
      other.complete(acquired(other.claim(KEY, EFFECT, ClaimOptions.DEFAULTS)), Map.of("run", (long) i + 1),
          SideWrites.NONE);
      LedgerRecord before = record(EFFECT);
      LOSSES.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));

      assertTrue(ledger.invalidate(KEY, EFFECT, before.generation(), "ops@example.com", "re-run " + i),
          LOSSES.get(i).toString());

      LedgerRecord invalidated = record(EFFECT);
      assertEquals(before.generation() + 1, invalidated.generation(), "moved on once: " + LOSSES.get(i));
      assertEquals(i + 1, invalidated.history().size(), "one run added to the history: " + LOSSES.get(i));
      assertEquals("re-run " + i, invalidated.history().get(i).reason());
      assertEquals(Map.of("run", (long) i + 1), invalidated.history().get(i).outcome());
    }
  }
}
