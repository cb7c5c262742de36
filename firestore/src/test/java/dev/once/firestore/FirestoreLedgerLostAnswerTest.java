package dev.once.firestore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.firestore.Firestore;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.NextClaim;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.wire.net.TcpProxy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The commit completing a claim applied, its answer lost to a reset connection (a TCP proxy in front of the emulator
 * drops it): the Firestore client resends the commit (it retries UNAVAILABLE), the resent commit's update-time
 * precondition fails, and the ledger's token transaction finds the record bearing the completion's own nonce: the
 * completion succeeded, and the next effect's claim it made is handed over. The wire-level twin of
 * {@code FirestoreLedgerResendTest}'s interceptor.
 */
class FirestoreLedgerLostAnswerTest {
  @Test
  void aCompletionAppliedWhoseAnswerIsLostToAReset_isRecognisedAsApplied_andHandsOverTheNextClaim() throws Exception {
    try (TcpProxy proxy = TcpProxy.start(FirestoreEmulator.shared().hostPort());
        Firestore db = FirestoreClients.forEmulator(TestFirestore.PROJECT, proxy.hostPort())) {
      FirestoreLedger ledger = new FirestoreLedger(db, LedgerOptions.defaults());
      IdempotencyKey key = IdempotencyKey.of("lost-answer-" + System.nanoTime());
      Claim claim = ((ClaimResult.Acquired) ledger.claim(key, "analyse", ClaimOptions.DEFAULTS)).claim();
      proxy.dropAnswersOfNext(1); // the next connection loses its first answer:
      proxy.cut(); // the client's open one is reset, so its next call, the commit, opens it
      proxy.restore();

      Claim next = ledger.complete(claim, Map.of("result", 1L), SideWrites.NONE, NextClaim.of("publish")).orElseThrow();

      assertEquals(1, proxy.counters().get("answersDropped"), "the commit's answer was lost once");
      assertEquals(RecordState.DONE, ledger.lookup(key, "analyse").orElseThrow().state(), "the commit was applied");
      assertEquals(RecordState.CLAIMED, ledger.lookup(key, "publish").orElseThrow().state(),
          "with the next effect's claim");
      ledger.complete(next, Map.of(), SideWrites.NONE);
      assertEquals(RecordState.DONE, ledger.lookup(key, "publish").orElseThrow().state(), "which its holder completes");
    }
  }

  /** The same, the commit picked by what its body holds (how the ambiguous-failure matrix targets one document). */
  @Test
  void aCompletionPickedByItsBody_losesItsAnswerOnce_onAConnectionInUse() throws Exception {
    try (TcpProxy proxy = TcpProxy.start(FirestoreEmulator.shared().hostPort());
        Firestore db = FirestoreClients.forEmulator(TestFirestore.PROJECT, proxy.hostPort())) {
      FirestoreLedger ledger = new FirestoreLedger(db, LedgerOptions.defaults());
      IdempotencyKey key = IdempotencyKey.of("gcs:inbox/picked-" + System.nanoTime() + ".pdf#1");
      Claim claim = ((ClaimResult.Acquired) ledger.claim(key, "analyse", ClaimOptions.DEFAULTS)).claim();
      proxy.dropAnswerOnceToRequestHolding(key.value(), "DONE");

      SideWrites analysis = writes -> writes.set("analyses", key.documentId(), Map.of("key", key.value()));
      Claim next = ledger.complete(claim, Map.of(), analysis, NextClaim.of("publish")).orElseThrow();
      ledger.complete(next, Map.of(), analysis);

      assertEquals(1, proxy.counters().get("picked"), "one request picked, the completion");
      assertEquals(1, proxy.counters().get("answersDropped"), "one answer lost, the completion's, resent once");
      assertEquals(RecordState.DONE, ledger.lookup(key, "analyse").orElseThrow().state());
      assertEquals(RecordState.DONE, ledger.lookup(key, "publish").orElseThrow().state());
    }
  }
}
