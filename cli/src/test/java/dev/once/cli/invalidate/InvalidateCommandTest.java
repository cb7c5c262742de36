package dev.once.cli.invalidate;

import static dev.once.pipeline.DocumentStatus.DUPLICATE;
import static dev.once.pipeline.DocumentStatus.SUBMITTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.cli.CliFirestore;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.cli.Operator;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code once invalidate} against the Firestore emulator: what it refuses (writing nothing), and what it records when
 * confirmed. {@code OperatorEndToEndTest} re-runs an invalidated analysis through the whole local pipeline.
 */
class InvalidateCommandTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/invoice.pdf#7");
  private final FirestoreLedger ledger = CliFirestore.ledger();

  @BeforeEach
  void clear() {
    CliFirestore.clear();
  }

  private Claim claim(IdempotencyKey key, String effect) {
    return ((ClaimResult.Acquired) ledger.claim(key, effect)).claim();
  }

  /** A sync document analysed and published, as DocumentUploaded leaves it. */
  private void analysedAndPublished(IdempotencyKey key, Map<String, Object> analysis) {
    ledger.complete(claim(key, Effects.ANALYSE), Map.of("status", "analysed"), SideWrites.NONE);
    ledger.complete(claim(key, Effects.PUBLISH), Map.of("messageId", "1"), SideWrites.NONE);
    CliFirestore.put(RecordWrites.ANALYSES, key.documentId(), analysis);
  }

  private LedgerRecord record(IdempotencyKey key, String effect) {
    return ledger.lookup(key, effect).orElseThrow();
  }

  private static OnceRunner.Result once(String answer, String... args) {
    return OnceRunner.runAnswering(CliFirestore.env(), answer, args);
  }

  private void assertUntouched(IdempotencyKey key, String why) {
    for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH)) {
      LedgerRecord record = record(key, effect);
      assertEquals(RecordState.DONE, record.state(), effect + ": " + why);
      assertEquals(1, record.generation(), effect + ": " + why);
      assertTrue(record.history().isEmpty(), effect + ": " + why);
    }
  }

  @Test
  void confirmed_keepsTheRunInTheHistory_withTheAuthenticatedAccount_andTheAnalysisTakesItsPublicationWithIt() {
    analysedAndPublished(KEY, Map.of("key", KEY.value(), "status", "analysed", "mode", "sync"));

    OnceRunner.Result result = once("yes\n", "invalidate", "gs://inbox/invoice.pdf#7", "analyse", "--reason",
        "prompt fixed");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.err().contains("about to invalidate [analyse (run 1, DONE), publish (run 1, DONE)] of "
        + KEY + ", so that the next delivery runs them once more and bills the analysis again"), result.all());
    assertTrue(result.err().contains("as " + Operator.localUser()), result.all());
    assertTrue(result.out().contains("carries the key " + KEY.rerun(2)), result.all());
    for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH)) {
      LedgerRecord moved = record(KEY, effect);
      assertEquals(2, moved.generation(), effect);
      assertTrue(moved.awaitingRerun(), effect);
      assertEquals(Operator.localUser(), moved.history().get(0).by(), effect + ": who is authenticated");
      assertEquals("prompt fixed", moved.history().get(0).reason(), effect);
    }
  }

  /** A change names what, where and as whom, then asks: without a "yes" (or --yes) nothing is invalidated. */
  @Test
  void withoutConfirmation_nothingIsInvalidated_andThereIsNoBy() {
    analysedAndPublished(KEY, Map.of("key", KEY.value(), "status", "analysed", "mode", "sync"));

    for (String answer : new String[] {null, "", "no\n"}) {
      OnceRunner.Result refused = once(answer, "invalidate", KEY.value(), "analyse", "--reason", "r");
      assertEquals(Exit.NOTHING, refused.status(), refused.all());
      assertTrue(refused.err().contains("in project " + CliFirestore.PROJECT), refused.all());
      assertTrue(refused.err().contains("not confirmed: nothing changed"), refused.all());
    }
    assertEquals(Exit.USAGE, once(null, "--yes", "invalidate", KEY.value(), "analyse", "--reason", "r", "--by",
        "someone-else").status(), "--by is not an option");
    assertUntouched(KEY, "not confirmed");
  }

  @Test
  void withoutAReason_itIsAUsageError_andNothingIsWritten() {
    analysedAndPublished(KEY, Map.of("key", KEY.value(), "status", "analysed", "mode", "sync"));

    OnceRunner.Result none = once(null, "--yes", "invalidate", KEY.value(), "analyse");
    OnceRunner.Result blank = once(null, "--yes", "invalidate", KEY.value(), "analyse", "--reason", " ");

    assertEquals(Exit.USAGE, none.status(), none.all());
    assertTrue(none.err().contains("--reason"), none.all());
    assertEquals(Exit.USAGE, blank.status(), blank.all());
    assertUntouched(KEY, "no reason");
  }

  /** A live claim (a delivery running it now), and a claim released for its redelivery: refused before asking. */
  @Test
  void aLiveClaim_andARunNotFinished_areRefused() {
    analysedAndPublished(KEY, Map.of("key", KEY.value(), "status", "analysed", "mode", "sync"));
    IdempotencyKey notified = KEY; // its result's notification, being sent
    claim(notified, Effects.NOTIFY);

    OnceRunner.Result live = once(null, "--yes", "invalidate", notified.value(), "notify", "--reason", "again");
    assertEquals(Exit.NOTHING, live.status(), live.all());
    assertTrue(live.out().contains("the claim of notify for " + notified + " is live until"), live.all());
    assertFalse(live.err().contains("about to"), "refused before it asks: " + live.all());

    IdempotencyKey failing = IdempotencyKey.of("gcs:inbox/failing.pdf#3");
    ledger.release(claim(failing, Effects.ANALYSE), "Gemini answered 503");
    OnceRunner.Result unfinished = once(null, "--yes", "invalidate", failing.value(), "analyse", "--reason", "again");
    assertEquals(Exit.NOTHING, unfinished.status(), unfinished.all());
    assertTrue(unfinished.out().contains("has not finished"), unfinished.all());

    assertEquals(1, record(notified, Effects.NOTIFY).generation());
    assertTrue(record(notified, Effects.NOTIFY).history().isEmpty());
    assertTrue(record(failing, Effects.ANALYSE).history().isEmpty());
  }

  /**
   * A batch document waiting for its job (a second queueing would run it twice), and the analysis of a copy (its
   * re-run would find the copy again): refused. A batch document its job completed: run again, like a sync one (issue
   * 38, item 6: the run rides with it through its next job, billed apart, published under KEY/rerun-N).
   */
  @Test
  void aBatchDocumentWaitingForItsJob_andACopysAnalysis_areRefused_butAFinishedBatchDocumentIsRunAgain() {
    IdempotencyKey waiting = IdempotencyKey.of("gcs:inbox/waiting.pdf#3");
    analysedAndPublished(waiting, Map.of("key", waiting.value(), "status", SUBMITTED.value(), "mode", "batch", "job",
        "batches/2"));
    analysedAndPublished(KEY, Map.of("key", KEY.value(), "status", "analysed", "mode", "batch", "job",
        "batches/1"));
    IdempotencyKey copy = IdempotencyKey.of("gcs:inbox/copy.pdf#8");
    analysedAndPublished(copy, Map.of("key", copy.value(), "status", DUPLICATE.value(), "mode", "sync",
        "duplicateOf", "gcs:inbox/first.pdf#1"));

    OnceRunner.Result inFlight = once(null, "--yes", "invalidate", waiting.value(), "analyse", "--reason", "again");
    OnceRunner.Result ofACopy = once(null, "--yes", "invalidate", copy.value(), "analyse", "--reason", "again");
    OnceRunner.Result finished = once(null, "--yes", "invalidate", KEY.value(), "analyse", "--reason", "again");

    assertEquals(Exit.NOTHING, inFlight.status(), inFlight.all());
    assertTrue(inFlight.out().contains("waits for its batch job (status submitted, job batches/2)"), inFlight.all());
    assertEquals(Exit.NOTHING, ofACopy.status(), ofACopy.all());
    assertTrue(ofACopy.out().contains("Invalidate the analyse of gcs:inbox/first.pdf#1 instead"), ofACopy.all());
    assertUntouched(waiting, "waiting for its job");
    assertUntouched(copy, "a copy");
    assertEquals(Exit.OK, finished.status(), finished.all());
    assertEquals(2, record(KEY, Effects.ANALYSE).generation(), "its next delivery runs it again, in whatever mode");
    OnceRunner.Result republished = once(null, "--yes", "invalidate", copy.value(), "publish", "--reason", "again");
    assertEquals(Exit.OK, republished.status(), "a copy's result may be published again: " + republished.all());
  }
}
