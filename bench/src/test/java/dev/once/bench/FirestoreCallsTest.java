package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.AggregateField;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import dev.once.local.emulator.FirestoreEmulator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The cost benchmark's counter must see every call the client makes, or its figures are too low. */
class FirestoreCallsTest {
  private static final String PROJECT = "once-calls";
  private static final long TIMEOUT_SECONDS = 30;
  private static FirestoreCalls calls;
  private static Firestore db;

  @BeforeAll
  static void connect() {
    FirestoreEmulator emulator = FirestoreEmulator.shared();
    emulator.clear(PROJECT);
    calls = new FirestoreCalls();
    db = FirestoreCalls.client(PROJECT, emulator.hostPort(), calls);
  }

  @AfterAll
  static void close() throws Exception {
    db.close();
  }

  @Test
  void countsReadsCommitsAndTransactions_andDescribesEachCommit() throws Exception {
    DocumentReference doc = db.collection("things").document("one");
    FirestoreCalls.Snapshot before = calls.snapshot();

    var created = doc.create(Map.of("n", 1L)).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    doc.get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    doc.update(Map.of("n", 2L), Precondition.updatedAt(created.getUpdateTime())).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    db.runTransaction(tx -> {
      tx.get(doc).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      tx.set(doc, Map.of("n", 3L));
      return null;
    }).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    db.collection("things").get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);

    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);
    assertEquals(3, spent.commitCount(), "create, fenced update, transaction: " + spent);
    assertEquals(3, spent.reads(), "get, transactional get, query: " + spent);
    assertEquals(Map.of("BeginTransaction", 1L), spent.others(), "the transaction began with its own call: " + spent);
    assertEquals(List.of("create things", "update-if-unchanged things", "set things (in a transaction)"),
        spent.commits());
    assertEquals(new FirestoreCalls.Billed(3, 3, 0, 0), spent.documents(), "documents, as Firestore bills them");
  }

  /**
   * Billed by the document, not by the call: a commit of two writes is two, a query of two documents two reads, an
   * empty query, a count and a sum one each, a missing document one; a commit refused by its precondition nothing; a
   * document written with an expiry is a delete to come.
   */
  @Test
  void countsDocumentsAsFirestoreBillsThem() throws Exception {
    var other = db.collection("billed");
    FirestoreCalls.Snapshot before = calls.snapshot();

    var batch = db.batch();
    batch.set(other.document("a"), Map.of("n", 5_000_000L));
    batch.set(other.document("b"), Map.of("n", 2L, FirestoreCalls.EXPIRE_AT, Timestamp.now()));
    var written = batch.commit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    other.get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    other.whereEqualTo("n", 99L).get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    other.count().get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    // a sum of large values over two documents (the budget's): one read, not one per unit summed
    other.orderBy("n").aggregate(AggregateField.sum("n")).get().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    db.getAll(other.document("missing")).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    try {
      other.document("a").update(Map.of("n", 3L), Precondition.updatedAt(Timestamp.ofTimeSecondsAndNanos(1, 0)))
          .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException refused) {
      // FAILED_PRECONDITION: nothing written
    }
    other.document("a").delete().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);

    FirestoreCalls.Billed billed = calls.snapshot().since(before).documents();
    assertEquals(2, written.size());
    assertEquals(new FirestoreCalls.Billed(6, 2, 1, 1), billed,
        "2 written (1 to expire), 2 + 1 + 1 + 1 + 1 read, 1 deleted, the refused update nothing");
  }
}
