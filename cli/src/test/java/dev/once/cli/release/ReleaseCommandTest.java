package dev.once.cli.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.Firestore;
import dev.once.cli.CliFirestore;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.cli.Operator;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code once release} against the Firestore emulator, including its race with the holder's completion. */
class ReleaseCommandTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/stuck.pdf#5");
  private final FirestoreLedger ledger = CliFirestore.ledger();

  @BeforeEach
  void clear() {
    CliFirestore.clear();
  }

  private Claim claim(IdempotencyKey key, String effect) {
    return ((ClaimResult.Acquired) ledger.claim(key, effect)).claim();
  }

  private static boolean complete(FirestoreLedger holders, Claim held) {
    try {
      holders.complete(held, Map.of("by", "holder"), SideWrites.NONE);
      return true;
    } catch (LeaseLost lost) {
      return false;
    }
  }

  private static boolean completeWithOwnClient(IdempotencyKey key, Claim held) throws Exception {
    try (Firestore own = CliFirestore.connect()) {
      FirestoreLedger holders = new FirestoreLedger(own, LedgerOptions.defaults());
      holders.lookup(key, held.effect()); // a new client learns Firestore's time from its first answer
      return complete(holders, held);
    }
  }

  private LedgerRecord record(IdempotencyKey key, String effect) {
    return ledger.lookup(key, effect).orElseThrow();
  }

  /**
   * A change names what it changes, the project and the account, then asks: without a "yes" on standard input or
   * --yes, nothing changes (exit 1). And --by is gone: the record names the authenticated account.
   */
  @Test
  void aReleaseIsNotMade_withoutConfirmation_andNamesTheProjectAndTheAccountFirst() {
    ledger.release(claim(KEY, Effects.ANALYSE), "Gemini answered 503");
    long token = record(KEY, Effects.ANALYSE).token();

    for (String answer : new String[] {null, "", "no\n", "yess\n"}) {
      OnceRunner.Result refused = OnceRunner.runAnswering(CliFirestore.env(), answer, "release", KEY.value(), "analyse",
          "--reason", "r");
      assertEquals(Exit.NOTHING, refused.status(), refused.all());
      assertTrue(refused.err().contains("about to release analyse of " + KEY.value()), refused.all());
      assertTrue(refused.err().contains("in project "), refused.all());
      assertTrue(refused.err().contains("as " + Operator.localUser()), refused.all());
      assertTrue(refused.err().contains("not confirmed: nothing changed"), refused.all());
      assertEquals(token, record(KEY, Effects.ANALYSE).token(), "nothing released");
      assertTrue(record(KEY, Effects.ANALYSE).released() == null, "no release recorded");
    }
    assertEquals(Exit.USAGE, OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "analyse", "--reason",
        "r", "--by", "someone-else").status(), "--by is not an option");

    OnceRunner.Result confirmed = OnceRunner.runAnswering(CliFirestore.env(), "yes\n", "release", KEY.value(),
        "analyse", "--reason", "r");
    assertEquals(Exit.OK, confirmed.status(), confirmed.all());
    assertEquals(Operator.localUser(), record(KEY, Effects.ANALYSE).released().by());
  }

  @Test
  void anExpiredClaim_isReleased_recordingWhoWhenAndWhy_andTheNextDeliveryTakesItOver() {
    ledger.release(claim(KEY, Effects.ANALYSE), "Gemini answered 503");

    OnceRunner.Result result =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", "gs://inbox/stuck.pdf#5", "analyse",
            "--reason", "the outage is over");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("released analyse of gcs:inbox/stuck.pdf#5 (token 2, 1 attempt)"), result.all());
    LedgerRecord released = record(KEY, Effects.ANALYSE);
    assertEquals(RecordState.CLAIMED, released.state());
    assertFalse(released.leaseLive());
    assertEquals(Operator.localUser(), released.released().by(), "the authenticated account, never a name typed in");
    assertEquals("the outage is over", released.released().reason());
    assertNotNull(released.released().at());
    assertEquals(3, released.token(), "the release moved the token on: the holder it released is fenced out");
    assertEquals(4, claim(KEY, Effects.ANALYSE).token(), "taken over by the next delivery");
  }

  @Test
  void byDefault_theOperatorIsTheLocalUserAtThisHost() {
    ledger.release(claim(KEY, Effects.PUBLISH), "Pub/Sub unavailable");
    OnceRunner.Result result =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "publish", "--reason", "r");
    assertEquals(Exit.OK, result.status(), result.all());
    assertEquals(Operator.localUser(), record(KEY, Effects.PUBLISH).released().by());
  }

  @Test
  void aLiveLease_isRefused_unlessLive_andThenItsHolderCannotFinish() {
    Claim held = claim(KEY, Effects.NOTIFY);

    OnceRunner.Result refused =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "notify", "--reason", "r");
    assertEquals(Exit.NOTHING, refused.status(), refused.all());
    assertTrue(refused.out().contains("not released: the lease of notify for " + KEY + " is live until"),
        refused.all());
    assertTrue(record(KEY, Effects.NOTIFY).leaseLive(), "untouched");
    assertNull(record(KEY, Effects.NOTIFY).released());

    OnceRunner.Result forced =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "notify", "--reason", "r",
            "--live");
    assertEquals(Exit.OK, forced.status(), forced.all());
    assertFalse(record(KEY, Effects.NOTIFY).leaseLive());
    assertThrows(LeaseLost.class, () -> ledger.complete(held, Map.of(), SideWrites.NONE), "fenced out");
    assertEquals(RecordState.CLAIMED, record(KEY, Effects.NOTIFY).state());
  }

  @Test
  void aFinishedEffect_orNoRecord_hasNothingToRelease() {
    ledger.complete(claim(KEY, Effects.ANALYSE), Map.of(), SideWrites.NONE);

    OnceRunner.Result done =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "analyse", "--reason", "r");
    assertEquals(Exit.NOTHING, done.status(), done.all());
    assertTrue(done.out().contains("nothing to release: analyse of " + KEY + " is DONE"), done.all());
    assertEquals(RecordState.DONE, record(KEY, Effects.ANALYSE).state());

    OnceRunner.Result none =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "publish", "--reason", "r");
    assertEquals(Exit.NOTHING, none.status(), none.all());
    assertTrue(none.out().contains("the ledger has no publish record"), none.all());
  }

  @Test
  void usageErrors_areExit64() {
    OnceRunner.Result effect =
        OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "bill", "--reason", "r");
    assertEquals(Exit.USAGE, effect.status(), effect.all());
    assertTrue(
        effect.err().contains("EFFECT must be one of content, analyse, submit, complete, publish, notify, dead-letter"),
        effect.all());
    OnceRunner.Result reason = OnceRunner.run(CliFirestore.env(), "--yes", "release", KEY.value(), "analyse");
    assertEquals(Exit.USAGE, reason.status(), reason.all());
    assertTrue(reason.err().contains("--reason"), reason.all());
  }

  /**
   * The operator's release against the holder's completion, started together, on 10 keys: exactly one wins each
   * time. The operator may read the record after the completion (nothing to release), or before it and lose the
   * fenced write, or win it; the holder then gets LeaseLost and writes nothing. Every other holder completes
   * through a client of its own, as another function instance would, which has a connection to make first: that
   * moves its write between the operator's read and write. (The operator writing first is shown by
   * aLiveLease_isRefused_unlessLive.)
   */
  @Test
  void aReleaseRacingTheHoldersCompletion_hasExactlyOneWinner() throws Exception {
    int keys = 10;
    Map<String, Integer> outcomes = new TreeMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int i = 0; i < keys; i++) {
        IdempotencyKey key = IdempotencyKey.of("gcs:inbox/race-" + i + ".pdf#1");
        Claim held = claim(key, Effects.ANALYSE);
        CountDownLatch start = new CountDownLatch(1);
        boolean ownClient = i % 2 == 1;
        Future<Boolean> holder = pool.submit(() -> {
          start.await();
          return ownClient ? completeWithOwnClient(key, held) : complete(ledger, held);
        });
        Future<OnceRunner.Result> operator = pool.submit(() -> {
          start.await();
          return OnceRunner.run(CliFirestore.env(), "--yes", "release", key.value(), "analyse", "--reason", "race",
              "--live");
        });
        start.countDown();
        boolean holderWon = holder.get(60, TimeUnit.SECONDS);
        OnceRunner.Result released = operator.get(60, TimeUnit.SECONDS);
        boolean operatorWon = released.status() == Exit.OK;
        assertTrue(released.status() == Exit.OK || released.status() == Exit.NOTHING, released.all());
        assertTrue(holderWon ^ operatorWon, "exactly one wins: holder " + holderWon + ", operator\n" + released.all());
        LedgerRecord record = record(key, Effects.ANALYSE);
        assertEquals(holderWon ? RecordState.DONE : RecordState.CLAIMED, record.state());
        assertEquals(operatorWon, record.released() != null);
        assertEquals(holderWon, record.outcome().containsKey("by"));
        String how = operatorWon ? "operator released it"
            : released.out().contains("nothing to release") ? "holder finished before the operator read it"
            : released.out().contains("no longer holds") ? "holder finished between the operator's read and write"
            : "unexplained";
        assertFalse(how.equals("unexplained"), released.all());
        outcomes.merge(how, 1, Integer::sum);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.println("release race over " + keys + " keys: " + outcomes);
  }
}
