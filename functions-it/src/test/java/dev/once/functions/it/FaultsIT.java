package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.storage.Blob;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.eventarc.DirectSender;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.Jvm;
import dev.once.local.samples.InvoicePdf;
import dev.once.local.stack.Part;
import dev.once.observe.Log;
import dev.once.wire.eventarc.CloudEvent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Dependencies that fail: every event is retried, completes once, and nothing is lost or doubled. */
class FaultsIT {
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;
  private static FirestoreLedger ledger;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().withReconciler());
    ledger = stack.ledger();
  }

  private static LedgerRecord record(String key, String effect) {
    return ledger.lookup(IdempotencyKey.of(key), effect).orElseThrow();
  }

  private static void assertOnceThrough(String key) {
    assertEquals(1, withKey(stack.documents("analyses"), key).size(), "one analysis");
    assertEquals("analysed", withKey(stack.documents("analyses"), key).get(0).getString("status"));
    assertEquals(1, withKey(stack.documents("billing"), key).size(), "one billing entry");
    assertEquals(1, attributed(stack.published(), key).size(), "one published result");
    assertEquals(1, stack.notifiedWith(key).size(), "one notification");
  }

  @Test
  void geminiUnavailable_theEventIsRetriedLater_andCompletesOnce() {
    // Three 503s. The SDK never repeats a paid call, so each fails one delivery, which Eventarc (the relay)
    // delivers again; a 503 before generation bills nothing, so none of them uses up the cap.
    long callsBefore = stack.gemini.count("generateContent");
    stack.gemini.failNext(3, 503);
    Blob blob = stack.upload("faults/unavailable.pdf", InvoicePdf.of("U1"), "application/pdf");
    String key = key(blob);
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the document to get through after the outage");
    assertOnceThrough(key);
    LedgerRecord analysis = record(key, "analyse");
    assertEquals(RecordState.DONE, analysis.state());
    assertEquals(4, analysis.attempts(), "three deliveries released their claim, the fourth completed it");
    assertEquals(1, analysis.spent(), "the refused tries are recorded as not performed: they do not count");
    assertEquals(List.of("not_performed", "not_performed", "not_performed", "done"),
        analysis.calls().stream().map(call -> call.outcome().stored()).toList());
    assertEquals(callsBefore + 4, stack.gemini.count("generateContent"), "one call per delivery, none repeated");
    assertTrue(analysis.error().contains("503"), "the last error is kept: " + analysis.error());
  }

  /**
   * On an instance of its own with a 2 s Gemini timeout (the stack's functions keep the deployment's 60 s, so no other
   * test meets a timeout by accident), its call answered after 4 s: the try times out, is recorded and released, and
   * the redelivery completes the document once.
   */
  @Test
  void geminiTimeout_theEventIsRetriedLater_andCompletesOnce() throws Exception {
    long callsBefore = stack.gemini.count("generateContent");
    try (FunctionProcess impatient = instanceWith(Map.of("GEMINI_TIMEOUT_SECONDS", "2"), "timeout")) {
      stack.gemini.latencyNext("generateContent", 1, Duration.ofSeconds(4)); // this call only: 2 s past the timeout
      String key = uploadTo(impatient, "faults/slow.pdf", InvoicePdf.of("S1"));
      Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1,
          "the document to get through once Gemini answers");
      assertOnceThrough(key);
      LedgerRecord analysis = record(key, "analyse");
      assertTrue(analysis.attempts() >= 2, "retried after the timeout");
      assertEquals(Call.Outcome.FAILED, analysis.calls().get(0).outcome(), "the timed-out try, recorded as one that may"
          + " have been billed: " + analysis.calls());
      assertTrue(stack.gemini.count("generateContent") - callsBefore >= 2, "the timed-out call was made again");
    }
  }

  /**
   * One more DocumentUploaded instance, with {@code env} over the stack's: a test of one setting runs on it, and the
   * stack's own functions keep theirs (a restart of the shared function, and its cold JVM, for every other test).
   */
  private static FunctionProcess instanceWith(Map<String, String> env, String name) {
    return stack.stack.startInstance(Part.DOCUMENT_UPLOADED, Jvm.quick("-Xmx512m"), env,
        "DocumentUploaded-" + name + ".log");
  }

  /**
   * Uploads a document whose finalize goes to {@code instance} only, as Eventarc delivers it (redelivered until
   * acknowledged): the bucket withholds its notification from the relay, so the stack's DocumentUploaded never sees
   * it. Its result is published and notified by the stack as any other.
   */
  private static String uploadTo(FunctionProcess instance, String name, byte[] content) throws Exception {
    stack.storage.withholdNotifications(true);
    Blob blob;
    try {
      blob = stack.upload(name, content, "application/pdf");
    } finally {
      stack.storage.withholdNotifications(false);
    }
    DirectSender.Report report = new DirectSender(List.of(instance.url()), 1, RetryPolicy.defaults()
        .withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
        .withMaxAge(Bounds.PATIENT), Bounds.CALL).send(List.of(DirectSender.finalized(stack.notificationOf(blob))));
    assertEquals(List.of(), report.gaveUp(), "the finalize delivered to " + instance.url());
    return key(blob);
  }

  /**
   * ONCE_MAX_ATTEMPTS=3, and every generateContent carried out, then answered 500 (so it may have been billed): three
   * deliveries make one call each and fail; the fourth gives up without a call. Its log line says failed, as its
   * analysis does, with the reason — not rejected, which is bad input — and nothing is billed; the failure is
   * published and notified once.
   */
  @Test
  void aDocumentGivenUpAtItsCap_isLoggedFailed_asItsAnalysisSays_andNothingIsBilled() throws Exception {
    long carriedOut = stack.gemini.count("generateContent.carriedOut");
    try (FunctionProcess capped = instanceWith(Map.of("ONCE_MAX_ATTEMPTS", "3"), "cap")) {
      stack.gemini.ambiguousNext("generateContent", 3, AmbiguousFailure.serverError(500));
      String key = uploadTo(capped, "faults/given-up.pdf", InvoicePdf.of("G1"));
      Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the given-up document to be notified");
      JsonNode gaveUp = Await.value(DEADLINE, () -> lines(capped, key).stream()
          .filter(line -> line.path("reason").asText().startsWith("gave up after 3 tries")).findFirst(),
          "the log line of the delivery that gave up");

      assertEquals("failed", gaveUp.path(Log.LABELS).path("outcome").asText(), gaveUp.toString());
      assertEquals(3, stack.gemini.count("generateContent.carriedOut") - carriedOut, "three paid calls, no fourth");
      assertEquals(List.of("none→failed", "none→failed", "none→failed", "analyse→failed"), lines(capped, key).stream()
          .map(line -> line.path(Log.LABELS).path("effect").asText() + "→" + line.path(Log.LABELS).path("outcome")
              .asText())
          .toList(), "three failed tries (redelivered), then the give-up (acknowledged): none rejected");
      var analysis = withKey(stack.documents("analyses"), key);
      assertEquals(1, analysis.size());
      assertEquals("failed", analysis.get(0).getString("status"));
      assertEquals(gaveUp.path("reason").asText(), analysis.get(0).getString("reason"), "the line says why");
      assertEquals(0, withKey(stack.documents("billing"), key).size(), "nothing billed: the tries' cost is unknown");
      assertEquals(1, attributed(stack.published(), key).size(), "the failure published once");
    } finally {
      stack.gemini.ambiguousNext("generateContent", 0, AmbiguousFailure.RESET);
    }
  }

  /** The instance's event lines for {@code key}, in the order it wrote them. */
  private static List<JsonNode> lines(FunctionProcess instance, String key) {
    return EventLines.of(instance.log(), 0, "DocumentUploaded").stream()
        .filter(line -> EventLines.isAbout(line, key))
        .toList();
  }

  @Test
  void notifyEndpointFailingTwice_getsOneSuccessfulNotification_withTheSameKeyEachTry() {
    stack.notify.answerNext(503, 429);
    Blob blob = stack.upload("faults/notify.pdf", InvoicePdf.of("N1"), "application/pdf");
    String key = key(blob);
    Await.until(DEADLINE, () -> ledger.lookup(IdempotencyKey.of(key), "notify")
        .map(r -> r.state() == RecordState.DONE).orElse(false), "the notification to succeed");
    List<Receiver.Received> tries = stack.notifiedWith(key);
    assertEquals(3, tries.size(), "two failed tries and one success");
    assertTrue(tries.stream().allMatch(t -> t.text().equals(tries.get(0).text())), "the same body every try");
    assertEquals(3, record(key, "notify").attempts());
  }

  @Test
  void notifyEndpointRefusing_rejectsOnce_andDeadLettersOnce_evenWhenRedelivered() throws Exception {
    stack.notify.answerNext(410);
    Blob blob = stack.upload("faults/refused.pdf", InvoicePdf.of("R1"), "application/pdf");
    String key = key(blob);
    Await.until(DEADLINE, () -> attributed(stack.deadLettered(), key).size() == 1, "the message to be dead-lettered");
    CloudEvent message = stack.lastEvent(CloudEvent.PUBSUB_PUBLISHED, key);
    stack.relay.redeliver(message.id()).orElseThrow().get();
    stack.relay.redeliver(message.id()).orElseThrow().get();
    assertEquals(1, attributed(stack.deadLettered(), key).size(), "dead-lettered once");
    assertEquals(1, stack.notifiedWith(key).size(), "the refusing endpoint was asked once");
    assertEquals(RecordState.REJECTED, record(key, "notify").state());
    assertTrue(record(key, "notify").error().contains("410"), record(key, "notify").error());
    String reason = attributed(stack.deadLettered(), key).get(0).getAttributesMap().getOrDefault("once_error", "");
    assertTrue(reason.contains("410"), "the dead letter says why: " + reason);
  }
}
