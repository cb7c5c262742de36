package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.ResourceExhaustedException;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.WriteBatch;
import dev.once.firestore.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What one Firestore commit may hold, as batch mode sizes its commits by it. Production (cloud.google.com/firestore/
 * quotas, "Writes and transactions"): a request of at most 10 MiB, a document of at most 1 MiB, and no longer a cap on
 * the writes of a commit (the old 500 is gone from that page). The Cloud SDK emulator, tested here: no cap on writes
 * either, a value over 1 MiB refused, and a gRPC message over 4 MiB refused — tighter than production, so a commit
 * that fits the emulator fits Firestore. A submission's commit (the gathering's member ids: 5,000 × 64 characters) and
 * a completion chunk's (100 documents: CompletionFlow.CHUNK) stay far below both.
 */
class BatchFirestoreLimitsTest {
  private static Firestore db;

  @BeforeAll
  static void start() {
    db = FirestoreClients.forEmulator("once-limits-test", FirestoreEmulator.shared().hostPort());
  }

  @AfterAll
  static void stop() throws Exception {
    db.shutdownNow(); // close() waits for the channel, which a refused over-size request can leave open
  }

  private static void commit(int writes, int bytesEach, String prefix) throws Exception {
    WriteBatch batch = db.batch();
    String filler = "x".repeat(bytesEach);
    for (int i = 0; i < writes; i++) {
      batch.set(db.collection("limits").document(prefix + i), Map.of("v", filler));
    }
    batch.commit().get();
  }

  @Test
  void aCommitOfThousandsOfWrites_isTaken() {
    assertDoesNotThrow(() -> commit(1_000, 10, "many-"));
  }

  @Test
  void aCommitOverFourMiB_isRefusedByTheEmulator() {
    ExecutionException refused = assertThrows(ExecutionException.class, () -> commit(20, 256 * 1024, "large-"));
    assertInstanceOf(ResourceExhaustedException.class, refused.getCause(), "5 MiB: " + refused.getCause());
    assertDoesNotThrow(() -> commit(12, 256 * 1024, "fits-"), "3 MiB fits");
  }

  @Test
  void aValueOverOneMiB_isRefused() {
    ExecutionException refused = assertThrows(ExecutionException.class, () -> commit(1, 1024 * 1024, "big-"));
    assertInstanceOf(InvalidArgumentException.class, refused.getCause(), String.valueOf(refused.getCause()));
  }
}
