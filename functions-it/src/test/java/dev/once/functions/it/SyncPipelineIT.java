package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.eventarc.DeliveryResult;
import dev.once.local.http.Receiver;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.eventarc.CloudEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Sync mode end to end: storage stand-in → relay → DocumentUploaded → Gemini → Firestore → Pub/Sub → notify. */
class SyncPipelineIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().withReconciler());
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
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1 && stack.relayIdle(),
        "one notification for " + key);

    // The same Pub/Sub message (same message id) and the same finalize event, each delivered again four times
    // at once from parallel senders.
    // The first delivery read the document; the bucket's second notification did too if it raced the first (a
    // delivery past the pre-check reads the document before its claim, to claim its content in the same commit).
    long downloadsBeforeRedeliveries = stack.storage.counters().get("objects.download");
    long firstReads = downloadsBeforeRedeliveries - downloadsBefore;
    assertTrue(firstReads == 1 || firstReads == 2, "read by the first delivery, and at most by its racing twin: "
        + firstReads);
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
    assertEquals(downloadsBeforeRedeliveries, stack.storage.counters().get("objects.download"),
        "duplicates after the first delivery read nothing from Storage");
  }

  /**
   * The same invoice uploaded three times (a first name, another name, a new generation of the first name): one Gemini
   * call and one bill; each upload is published and notified once under its own key, the copies as duplicates naming
   * the first; and every notification verifies against NOTIFY_SIGNING_SECRET by the Standard Webhooks rule, computed
   * here from the specification.
   */
  @Test
  void theSameBytesUploadedThreeTimes_costOneGeminiCallAndOneBill_andEachUploadIsNotifiedOnce() throws Exception {
    long geminiCallsBefore = stack.gemini.count("generateContent");
    byte[] invoice = InvoicePdf.of("same-" + System.nanoTime());
    String first = PipelineStack.key(stack.upload("invoices/same.pdf", invoice, "application/pdf"));
    Await.until(DEADLINE, () -> stack.notifiedWith(first).size() == 1, "the first upload notified");
    List<String> copies = List.of(
        PipelineStack.key(stack.upload("invoices/same-copy.pdf", invoice, "application/pdf")),
        PipelineStack.key(stack.upload("invoices/same.pdf", invoice, "application/pdf")));
    assertTrue(!copies.contains(first) && !copies.get(0).equals(copies.get(1)), copies.toString());
    Await.until(DEADLINE, () -> copies.stream().allMatch(k -> stack.notifiedWith(k).size() == 1) && stack.relayIdle(),
        "the copies notified");

    assertEquals(1, stack.gemini.count("generateContent") - geminiCallsBefore, "one Gemini call");
    assertEquals(1, PipelineStack.withKey(stack.documents("billing"), first).size(), "one bill");
    for (String copy : copies) {
      assertEquals(0, PipelineStack.withKey(stack.documents("billing"), copy).size(), "no bill for " + copy);
      QueryDocumentSnapshot analysis = PipelineStack.withKey(stack.documents("analyses"), copy).get(0);
      assertEquals("duplicate", analysis.getString("status"));
      assertEquals(first, analysis.getString("duplicateOf"));
      assertEquals(1, PipelineStack.attributed(stack.published(), copy).size(), "one published result for " + copy);
      Receiver.Received notification = stack.notifiedWith(copy).get(0);
      JsonNode result = JSON.readTree(notification.body()).path("result");
      assertEquals("duplicate", result.path("status").asText(), result.toString());
      assertEquals(first, result.path("duplicateOf").asText());
      assertTrue(signedAsStandardWebhooks(notification), "a signed notification: " + notification.headers());
    }
    assertTrue(signedAsStandardWebhooks(stack.notifiedWith(first).get(0)));
  }

  /**
   * A rename ({@code gcloud storage mv}: a copy, then a delete) while Gemini answers 503: the original's try is
   * released, the copy waits for it, the original is deleted and its redelivery finds it gone. The copy is the next
   * live one of those bytes: analysed and billed once, under its new name — not a duplicate of what nobody analysed.
   */
  @Test
  void aRenameWhileGeminiIsUnavailable_isAnalysedOnce_underItsNewName() throws Exception {
    byte[] invoice = InvoicePdf.of("renamed-" + System.nanoTime());
    stack.gemini.failNext(100_000, 503);
    Blob original;
    Blob renamed;
    try {
      original = stack.upload("invoices/renamed.pdf", invoice, "application/pdf");
      String originalKey = PipelineStack.key(original);
      Await.until(DEADLINE, () -> PipelineStack.withKey(stack.documents("idempotency"), originalKey).stream()
          .anyMatch(r -> "analyse".equals(r.getString("effect")) && r.getString("error") != null), "a 503 for it");
      renamed = stack.upload("invoices/renamed-new.pdf", invoice, "application/pdf");
      stack.storage.deleteGeneration(original.getBucket(), original.getName(), original.getGeneration());
      Await.until(DEADLINE, () -> PipelineStack.withKey(stack.documents("analyses"), originalKey).stream()
          .anyMatch(a -> "rejected".equals(a.getString("status"))), "the original refused as gone");
    } finally {
      stack.gemini.failNext(0, 503);
    }
    String copy = PipelineStack.key(renamed);
    stack.awaitReconciling(DEADLINE, Duration.ofSeconds(2), () -> stack.notifiedWith(copy).size() == 1,
        "the renamed copy notified");
    assertEquals("analysed", PipelineStack.withKey(stack.documents("analyses"), copy).get(0).getString("status"));
    assertEquals(1, PipelineStack.withKey(stack.documents("billing"), copy).size(), "billed once, as the copy");
    assertEquals("analysed", JSON.readTree(stack.notifiedWith(copy).get(0).body()).path("result").path("status")
        .asText());
  }

  /** standardwebhooks.com: base64 HMAC-SHA256 of "id.timestamp.body", keyed with the secret's base64 after whsec_. */
  private static boolean signedAsStandardWebhooks(Receiver.Received notification) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(
        Base64.getDecoder().decode(stack.notifySecret.substring("whsec_".length())), "HmacSHA256"));
    mac.update((notification.header("webhook-id") + "." + notification.header("webhook-timestamp") + ".")
        .getBytes(StandardCharsets.UTF_8));
    String expected = "v1," + Base64.getEncoder().encodeToString(mac.doFinal(notification.body()));
    return Arrays.asList(notification.header("webhook-signature").split(" ")).contains(expected);
  }
}
