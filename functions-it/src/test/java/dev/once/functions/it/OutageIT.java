package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.net.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Dependencies going away in the middle of a stream of events: the functions reach Firestore and Pub/Sub through
 * proxies that can be cut. Nothing is lost (every document completes after redelivery) and nothing is doubled
 * (one analysis, one bill, one successful notification each; any extra copy of an external effect carries the
 * same key and body, for its receiver to drop).
 */
class OutageIT {
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static TcpProxy firestore;
  private static TcpProxy pubsub;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    firestore = TcpProxy.start(FirestoreEmulator.shared().hostPort());
    pubsub = TcpProxy.start(PubSubEmulator.shared().hostPort());
    stack = PipelineStack.start(new PipelineStack.Config("sync", 3,
        RetryPolicy.defaults().withMaxAttempts(100).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
            .withMaxAge(Duration.ofMinutes(5)),
        Map.of())
        .withEnv("FIRESTORE_EMULATOR_HOST", firestore.hostPort())
        .withEnv("PUBSUB_EMULATOR_HOST", pubsub.hostPort())
        .withEnv("NOTIFY_TIMEOUT_SECONDS", "2")); // a stalled notify endpoint is given up on within seconds
  }

  @AfterAll
  static void stop() {
    stack.close();
    firestore.close();
    pubsub.close();
  }

  private static List<String> uploadStream(String folder, int documents, int outageAfter, Runnable outage) {
    List<String> keys = new ArrayList<>();
    CompletableFuture<Void> during = null;
    for (int i = 0; i < documents; i++) {
      keys.add(key(stack.upload(folder + "/doc-" + i + ".pdf", InvoicePdf.of(folder + i), "application/pdf")));
      if (i == outageAfter) {
        during = CompletableFuture.runAsync(outage, PipelineStack.BACKGROUND);
      }
    }
    during.join();
    return keys;
  }

  private static void assertNothingLostNothingDoubled(List<String> keys) {
    Await.until(DEADLINE, () -> keys.stream().allMatch(k -> !stack.notifiedWith(k).isEmpty()),
        "every document notified");
    FirestoreLedger ledger = stack.ledger();
    Await.until(DEADLINE, () -> keys.stream().allMatch(k -> ledger.lookup(IdempotencyKey.of(k), "notify")
        .map(r -> r.state() == RecordState.DONE).orElse(false)), "every notification recorded");
    stack.assertAnalysedBilledAndPublishedOnce(keys);
    for (String key : keys) {
      List<Receiver.Received> notified = stack.notifiedWith(key);
      assertTrue(notified.stream().allMatch(n -> n.text().equals(notified.get(0).text())),
          "every notification try of " + key + " has the same body");
      LedgerRecord notify = ledger.lookup(IdempotencyKey.of(key), "notify").orElseThrow();
      assertEquals(RecordState.DONE, notify.state());
    }
  }

  @Test
  void firestoreStoppedAndRestartedWithItsData_midStream_losesAndDoublesNothing() {
    List<String> keys = uploadStream("outage-firestore", 16, 5, () -> {
      // Cut first, so no write lands between the export and the stop: Firestore keeps what it acknowledged.
      firestore.cut();
      FirestoreEmulator.shared().restartKeepingData(stack.project, () -> Outage.last(Duration.ofSeconds(4)));
      firestore.restore();
    });
    assertNothingLostNothingDoubled(keys);
  }

  @Test
  void pubSubCutDuringPublish_losesAndDoublesNothing() {
    List<String> keys = uploadStream("outage-pubsub", 12, 3, () -> {
      pubsub.cut();
      Outage.last(Duration.ofSeconds(5));
      pubsub.restore();
    });
    assertNothingLostNothingDoubled(keys);
  }

  @Test
  void notifyEndpointTimingOut_isRetried_untilOneNotificationIsRecorded() {
    for (int i = 0; i < 4; i++) {
      stack.notify.stallNext(Duration.ofSeconds(3)); // the functions wait 2 s
    }
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      keys.add(key(stack.upload("outage-notify/doc-" + i + ".pdf", InvoicePdf.of("T" + i), "application/pdf")));
    }
    assertNothingLostNothingDoubled(keys);
    FirestoreLedger ledger = stack.ledger();
    int retried = 0;
    for (String key : keys) {
      retried += ledger.lookup(IdempotencyKey.of(key), "notify").orElseThrow().attempts() - 1;
    }
    assertTrue(retried >= 4, "the four timed-out tries were retried: " + retried);
  }
}
