package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import dev.once.local.emulator.FirestoreEmulator;
import java.util.List;
import java.util.Map;
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
  }
}
