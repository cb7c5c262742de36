package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.ResourceExhaustedException;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.WriteBatch;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.Analysis;
import dev.once.gemini.InvoiceBounds;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.SideWrites;
import dev.once.local.emulator.FirestoreEmulator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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

  /**
   * Issue 38, item 5, at the bounds on the emulator: a completion chunk of 100 documents at their worst (keys and
   * object names of 1,000 bytes, invoices the model wrote as long as it could, cut to {@link InvoiceBounds}) is one
   * commit the emulator takes (its 4 MiB per request, each document under 1 MiB), its ledger record with the 100
   * summaries included.
   */
  @Test
  void theWorstChunkOfACompletion_isOneCommitFirestoreTakes() {
    Once once = new Once(new FirestoreLedger(db,
        LedgerOptions.defaults()));
    RecordWrites records = new RecordWrites(PriceTable.builtIn());
    Map<String, Object> hostile = new LinkedHashMap<>();
    for (String field : List.of("supplier", "invoiceNumber", "issueDate", "dueDate", "currency")) {
      hostile.put(field, "€".repeat(20_000));
    }
    List<Object> lines = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      lines.add(Map.of("description", "€".repeat(2_000), "amount", i));
    }
    hostile.put("lineItems", lines);
    InvoiceBounds.Bounded bounded = InvoiceBounds.bound(hostile);
    Analysis analysis = new Analysis("gemini-3.5-flash-lite", "gemini-3.5-flash-lite", bounded.invoice(), null,
        new Usage(560, 16_384, 16_944, 16_000), null, bounded.truncated());
    List<Map<String, Object>> summaries = new ArrayList<>();
    List<SideWrites> writes = new ArrayList<>();
    for (int i = 0; i < 100; i++) { // a chunk: CompletionFlow.CHUNK
      String name = String.format("%03d/", i) + "n".repeat(990);
      DocumentSource source =
          new DocumentSource("b".repeat(63), name, 1L << 50, "application/pdf", 1 << 20, null, null);
      IdempotencyKey key = IdempotencyKey.of("gcs:" + source.bucket() + "/" + name.substring(0, 900) + "#" + i);
      summaries
          .add(ResultMessage.CODEC.encode(ResultMessage.analysed(key, source, analysis, "batches/" + "j".repeat(40))));
      writes.add(records.analysed(key, source, analysis, "batches/" + "j".repeat(40)));
    }
    Outcome done = once.run(IdempotencyKey.of("gemini:batches/worst#chunk-0"), "complete",
        attempt -> Completion.of(Map.of("documents", summaries), SideWrites.all(writes)));
    assertInstanceOf(Outcome.Processed.class, done, String.valueOf(done));
  }
}
