package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.eventarc.DirectSender;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.storage.ObjectFinalized;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The duplicate storm, small (issue 7; the full 1,000 × 5 over 4 processes is {@code dev/bench storm}): every
 * finalize delivered five times with five event ids, shuffled, in parallel over two DocumentUploaded instances.
 * Each document must be analysed, billed, sent to Gemini and published exactly once.
 */
class DuplicateStormIT {
  private static final int DOCUMENTS = 60;
  private static final int COPIES = 5;
  private static final int PROCESSES = 2;
  /** Four requests at a time per instance, DocumentUploaded's concurrency when deployed. */
  private static final int SENDERS = 4 * PROCESSES;
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.storm(PROCESSES);
  }

  @AfterAll
  static void stop() {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void everyDocument_isAnalysedBilledAndPublishedOnce_whenEachFinalizeArrivesFiveTimesAtOnce() throws Exception {
    long geminiBefore = stack.gemini.count("generateContent");
    Set<String> keys = new HashSet<>();
    List<CloudEvent> deliveries = new ArrayList<>();
    for (int i = 0; i < DOCUMENTS; i++) {
      ObjectFinalized first = stack.notificationOf(
          stack.upload("storm/invoice-" + i + ".pdf", InvoicePdf.of("S-" + i), "application/pdf"));
      keys.add("gcs:" + first.bucket() + "/" + first.name() + "#" + first.generation());
      deliveries.add(DirectSender.finalized(first));
      for (int c = 1; c < COPIES; c++) {
        deliveries
            .add(DirectSender.finalized(stack.storage.renotify(first.bucket(), first.name(), first.generation())));
      }
    }
    assertEquals(DOCUMENTS * COPIES, deliveries.stream().map(CloudEvent::id).distinct().count(),
        "every delivery has its own event id");
    Collections.shuffle(deliveries, new Random(7));

    // In-flight duplicates are answered 500 and retried, as Eventarc would (for a day); nothing may be given up. The
    // patience is a hang guard: 50 tries within a minute ran out while a loaded machine held a claim longer.
    DirectSender sender = new DirectSender(stack.urls(), SENDERS,
        RetryPolicy.defaults().withBackoff(Duration.ofMillis(20), Duration.ofMillis(500)).withMaxAttempts(10_000)
            .withMaxAge(Bounds.PATIENT.multipliedBy(2)),
        Bounds.CALL);
    DirectSender.Report report = sender.send(deliveries);
    assertEquals(List.of(), report.gaveUp(), "every delivery is eventually acknowledged");

    List<QueryDocumentSnapshot> analyses = stack.documents("analyses");
    assertEquals(keys, keysOf(analyses), "one analysis per document");
    assertEquals(DOCUMENTS, analyses.size(), "exactly one analysis per document");
    assertTrue(analyses.stream().allMatch(a -> "analysed".equals(a.getString("status"))),
        "every document was analysed: "
            + analyses.stream().map(a -> a.getString("status")).collect(Collectors.toSet()));
    List<QueryDocumentSnapshot> billing = stack.documents("billing");
    assertEquals(keys, keysOf(billing), "one bill per document");
    assertEquals(DOCUMENTS, billing.size(), "exactly one bill per document");
    assertEquals(DOCUMENTS, stack.gemini.count("generateContent") - geminiBefore, "one Gemini call per document");

    Await.until(DEADLINE, () -> stack.published().size() >= DOCUMENTS, DOCUMENTS + " published results");
    List<PubsubMessage> published = stack.published();
    Map<String, Long> perKey = published.stream().collect(
        Collectors.groupingBy(m -> m.getAttributesMap().get("idempotency_key"), Collectors.counting()));
    assertEquals(keys, perKey.keySet(), "a result for every document");
    assertEquals(DOCUMENTS, published.size(), "each result published once: " + perKey);
  }

  private static Set<String> keysOf(List<QueryDocumentSnapshot> documents) {
    return documents.stream().map(d -> d.getString("key")).collect(Collectors.toSet());
  }
}
