package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.Await;
import dev.once.local.eventarc.CloudEvent;
import dev.once.local.eventarc.DeliveryResult;
import dev.once.local.http.Receiver;
import dev.once.local.samples.InvoicePdf;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Sync mode end to end: storage stand-in → relay → DocumentUploaded → Gemini → Firestore → Pub/Sub → notify. */
class SyncPipelineIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Duration.ofSeconds(90);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync());
  }


  @Test
  void invoice_isAnalysedBilledPublishedAndNotifiedOnce_despiteDoubledRedeliveredAndParallelDeliveries()
      throws Exception {
    long geminiCallsBefore = stack.gemini.count("generateContent");
    long downloadsBefore = stack.storage.counters().get("objects.download");
    stack.storage.notifyTwice(true);
    Blob blob;
    try {
      blob = stack.upload("invoices/acme-0001.pdf", InvoicePdf.of("0001"), "application/pdf");
    } finally {
      stack.storage.notifyTwice(false);
    }
    String key = PipelineStack.key(blob);
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1 && stack.relayIdle(), "one notification for " + key);

    // The same Pub/Sub message (same message id) and the same finalize event, each delivered again four times
    // at once from parallel senders.
    CloudEvent message = stack.lastEvent(CloudEvent.PUBSUB_PUBLISHED, key);
    CloudEvent finalize = stack.lastEvent(CloudEvent.STORAGE_FINALIZED, blob.getName());
    List<CompletableFuture<DeliveryResult.Outcome>> again = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      again.add(stack.relay.redeliver(message.id()).orElseThrow());
      again.add(stack.relay.redeliver(finalize.id()).orElseThrow());
    }
    for (CompletableFuture<DeliveryResult.Outcome> outcome : again) {
      assertEquals(DeliveryResult.Outcome.DELIVERED, outcome.get(), "every redelivery is acknowledged");
    }

    long finalizeNotifications = stack.storage.notifications().stream()
        .filter(n -> n.name().equals(blob.getName())).count();
    assertEquals(2, finalizeNotifications, "the bucket notified the upload twice, with two event ids");

    List<QueryDocumentSnapshot> analyses = PipelineStack.withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size(), "one analysis");
    assertEquals("analysed", analyses.get(0).getString("status"));
    assertTrue(analyses.get(0).get("invoice") instanceof Map<?, ?> invoice && invoice.containsKey("supplier"),
        "the analysis holds the invoice fields: " + analyses.get(0).getData());

    List<QueryDocumentSnapshot> billing = PipelineStack.withKey(stack.documents("billing"), key);
    assertEquals(1, billing.size(), "one billing entry");
    assertTrue(billing.get(0).getLong("totalTokens") > 0);
    assertTrue(billing.get(0).getLong("costMicroUsd") > 0, "priced from the price table: " + billing.get(0).getData());

    List<PubsubMessage> published = PipelineStack.attributed(stack.published(), key);
    assertEquals(1, published.size(), "one published result");
    JsonNode result = JSON.readTree(published.get(0).getData().toByteArray());
    assertEquals("analysed", result.path("status").asText());
    assertEquals(key, result.path("key").asText());

    List<Receiver.Received> notifications = stack.notifiedWith(key);
    assertEquals(1, notifications.size(), "one notification");
    assertEquals("analysed", JSON.readTree(notifications.get(0).body()).path("result").path("status").asText());

    assertEquals(1, stack.gemini.count("generateContent") - geminiCallsBefore, "one Gemini call");
    assertEquals(1, stack.storage.counters().get("objects.download") - downloadsBefore,
        "duplicates read nothing from Storage");
  }
}
