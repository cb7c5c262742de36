package dev.once.cli.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.cli.CliFirestore;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.SideWrites;
import dev.once.local.emulator.FreePort;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code once inspect} against the Firestore emulator, on records written as the pipeline writes them. */
class InspectCommandTest {
  private final FirestoreLedger ledger = CliFirestore.ledger();

  @BeforeEach
  void clear() {
    CliFirestore.clear();
  }

  private Claim claim(IdempotencyKey key, String effect) {
    return ((ClaimResult.Acquired) ledger.claim(key, effect, "fp")).claim();
  }

  private void done(IdempotencyKey key, String effect, Map<String, Object> outcome) {
    ledger.complete(claim(key, effect), outcome, SideWrites.NONE);
  }

  @Test
  void aDocumentAnalysedOnce_showsEveryEffect_andIsBilledOnce() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/invoice.pdf#1796008827123000");
    done(key, Effects.ANALYSE, Map.of("mode", "sync"));
    done(key, Effects.PUBLISH, Map.of("messageId", "1"));
    done(key, Effects.NOTIFY, Map.of("status", 200));
    CliFirestore.put(RecordWrites.ANALYSES, key.documentId(), Map.of("key", key.value(), "status", "analysed",
        "mode", "sync", "model", "gemini-3.5-flash-lite"));
    CliFirestore.put(RecordWrites.BILLING, key.documentId(),
        Map.of("key", key.value(), "model", "gemini-3.5-flash-lite",
            "totalTokens", 400, "costMicroUsd", 322));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", "gs://inbox/invoice.pdf#1796008827123000");

    assertEquals(Exit.OK, result.status(), result.all());
    for (String line : List.of("key gcs:inbox/invoice.pdf#1796008827123000", "analyse       DONE",
        "publish       DONE", "notify        DONE", "complete      —", "status analysed, mode sync",
        "verdict: billed once")) {
      assertTrue(result.out().contains(line), "'" + line + "' in\n" + result.all());
    }
  }

  /** A log line names its key by hash only: the hash finds the key through its document's analysis. */
  @Test
  void aLogLinesKeyHash_findsTheKeyItNames() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/Jane Doe.pdf#1796008827123000");
    IdempotencyKey other = IdempotencyKey.of("gcs:inbox/John Doe.pdf#1796008827123000");
    for (IdempotencyKey k : List.of(key, other)) {
      done(k, Effects.ANALYSE, Map.of("mode", "sync"));
      CliFirestore.put(RecordWrites.ANALYSES, k.documentId(),
          Map.of("key", k.value(), "status", "analysed", "mode", "sync"));
    }

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", key.logHash());

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("key " + key.value() + "   (keyHash " + key.logHash()), result.all());
    assertTrue(result.out().contains("analyse       DONE"), result.all());
    assertTrue(!result.out().contains(other.value()), "only the key of that hash: " + result.all());

    OnceRunner.Result unknown = OnceRunner.run(CliFirestore.env(), "inspect", "0123456789abcdef");
    assertEquals(Exit.NOTHING, unknown.status(), unknown.all());
    assertTrue(unknown.out().contains("a keyHash is found through the analysis of its document"), unknown.all());
  }

  /** Every paid call is a try the ledger recorded before it was made: the verdict counts them. */
  @Test
  void aDocumentWhoseGeminiCallsTimedOut_showsEachTry_andTheVerdictCountsTheCalls() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/slow.pdf#1796008827123001");
    ledger.release(claim(key, Effects.ANALYSE), "GenAiIOException: Failed to execute HTTP request (cause:"
        + " InterruptedIOException: timeout)", true, SideWrites.NONE);
    ledger.release(claim(key, Effects.ANALYSE), "Gemini answered 429 RESOURCE_EXHAUSTED: quota", false,
        SideWrites.NONE);
    ledger.release(claim(key, Effects.ANALYSE), "SocketTimeoutException: Read timed out", true, SideWrites.NONE);
    done(key, Effects.ANALYSE, Map.of("mode", "sync"));
    CliFirestore.put(RecordWrites.BILLING, key.documentId(),
        Map.of("key", key.value(), "model", "gemini-3.5-flash-lite",
            "totalTokens", 400, "costMicroUsd", 322));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", key.value());

    assertEquals(Exit.OK, result.status(), result.all());
    for (String line : List.of("try 1 at", "failed (GenAiIOException", "try 2 at", "not performed (Gemini answered 429",
        "try 4 at", ": done", "verdict: billed once; 3 Gemini calls, 2 timed out")) {
      assertTrue(result.out().contains(line), "'" + line + "' in\n" + result.all());
    }
  }

  @Test
  void anUnknownKey_exits1_sayingWhatWasLookedFor() {
    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", "gcs:inbox/never-uploaded.pdf#1");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("nothing is known about gcs:inbox/never-uploaded.pdf#1"), result.all());
  }

  @Test
  void aClaimTakenOver_showsItsLiveLeaseAndLastError_andASecondBillIsShown() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/inspect/twice.pdf#7");
    ledger.release(claim(key, Effects.ANALYSE), "Gemini answered 503");
    claim(key, Effects.ANALYSE); // taken over: a live lease, attempt 2, the last error kept
    // Fixed ids make a second bill impossible for the pipeline; inspect must still show one if it is there.
    for (String id : List.of(key.documentId(), "a-second-writer")) {
      CliFirestore.put(RecordWrites.BILLING, id, Map.of("key", key.value(), "model", "m", "totalTokens", 1));
    }

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", key.value());

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("analyse       CLAIMED   attempts 2, token 3"), result.all());
    assertTrue(result.out().contains("lease live until"), result.all());
    assertTrue(result.out().contains("last error: Gemini answered 503"), result.all());
    assertTrue(result.out().contains("verdict: billed 2 times"), result.all());
  }

  @Test
  void aBatchJob_inAnySpelling_listsItsDocuments() {
    String job = "batches/abc123";
    IdempotencyKey jobKey = GeminiCompletionKeys.ofName(job);
    done(jobKey, Effects.COMPLETE, Map.of("documents", 1));
    IdempotencyKey document = IdempotencyKey.of("gcs:inbox/batch.pdf#3");
    CliFirestore.put(RecordWrites.ANALYSES, document.documentId(), Map.of("key", document.value(), "status", "analysed",
        "mode", "batch", "job", job));
    CliFirestore.put(RecordWrites.BILLING, document.documentId(), Map.of("key", document.value(), "batch", true));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect",
        " https://generativelanguage.googleapis.com/v1beta/" + job + "/ ");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("key gemini:" + job), result.all());
    assertTrue(result.out().contains("complete      DONE"), result.all());
    assertTrue(result.out().contains("gcs:inbox/batch.pdf#3  status analysed, billed once"), result.all());
  }

  @Test
  void anOperatorsRelease_isShown_withWhoWhenAndWhy() {
    IdempotencyKey key = IdempotencyKey.of("pubsub:released-1");
    Claim held = claim(key, Effects.NOTIFY);
    ledger.forceRelease(key, Effects.NOTIFY, held.token(), "alice@example.com", "stuck since the outage", true);

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "inspect", key.value());

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("released by alice@example.com at 20"), result.all());
    assertTrue(result.out().contains(": stuck since the outage"), result.all());
    assertTrue(result.out().contains("lease expired at"), result.all());
  }

  @Test
  void firestoreUnreachable_isOneLineAndExit2_withoutAStackTrace() {
    String nobody = "127.0.0.1:" + FreePort.pick();
    OnceRunner.Result result = OnceRunner.run(Map.of("FIRESTORE_EMULATOR_HOST", nobody), "inspect", "pubsub:1");

    assertEquals(Exit.FIRESTORE, result.status(), result.all());
    assertEquals(1, result.err().strip().lines().count(), result.all());
    assertTrue(result.err().startsWith("once inspect: no Firestore emulator answers on " + nobody), result.all());
    assertFalse(result.err().contains("\tat "), result.all());
  }

  @Test
  void usage_isExit64_andHelpIsExit0() {
    OnceRunner.Result none = OnceRunner.run(CliFirestore.env(), "inspect");
    assertEquals(Exit.USAGE, none.status(), none.all());
    assertTrue(none.err().contains("Missing required parameter: 'KEY'"), none.all());
    OnceRunner.Result help = OnceRunner.run(CliFirestore.env(), "inspect", "--help");
    assertEquals(Exit.OK, help.status(), help.all());
    assertTrue(help.out().contains("Exit codes:"), help.all());
    OnceRunner.Result unknown = OnceRunner.run(CliFirestore.env(), "inspekt", "x");
    assertEquals(Exit.USAGE, unknown.status(), unknown.all());
  }
}
