package dev.once.run.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.budget.DaySpend;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.Effects;
import dev.once.run.Mode;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The demo's verdict from what it observed: a healthy run passes; an effect that ran twice or an event that was lost
 * fails it. (The end-to-end test shows a real stack passes; this shows the verdict can fail.)
 */
class EvaluationTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Samples.Sample PDF = new Samples.Sample("a.pdf", "application/pdf", new byte[] {1});
  private static final Upload A = new Upload(PDF, "demo/x/a.pdf", IdempotencyKey.of("gcs:inbox/demo/x/a.pdf#1"));
  private static final Upload B = new Upload(PDF, "demo/x/b.pdf", IdempotencyKey.of("gcs:inbox/demo/x/b.pdf#2"));

  /** A Firestore where every effect of both documents is done, each billed and analysed {@code billedB} / once. */
  private static final class Stored implements StoredState {
    final Map<String, RecordState> states = new HashMap<>();
    int billedB = 1;

    Stored() {
      for (Upload u : List.of(A, B)) {
        for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH, Effects.NOTIFY)) {
          states.put(u.key() + "|" + effect, RecordState.DONE);
        }
      }
    }

    @Override
    public Optional<LedgerRecord> record(IdempotencyKey key, String effect) {
      RecordState state = states.get(key + "|" + effect);
      Instant now = Instant.now();
      return Optional.ofNullable(state).map(s -> new LedgerRecord("id", key.value(), effect, s, 1, 1, now, now, null,
          null, Map.of(), now, now, now, null, List.of(), 1, false));
    }

    @Override
    public int billingEntries(IdempotencyKey key) {
      return key.equals(B.key()) ? billedB : 1;
    }

    @Override
    public int analyses(IdempotencyKey key) {
      return 1;
    }

    @Override
    public long costMicroUsd(IdempotencyKey key) {
      return 322;
    }

    @Override
    public DaySpend spendToday() {
      return new DaySpend(LocalDate.parse("2026-11-30"), 966, 21_021);
    }
  }

  private static Observation observed(Map<IdempotencyKey, List<String>> messages, Map<String, Integer> notified,
      long geminiCalls) {
    Map<String, List<Observation.Delivery>> deliveries = new HashMap<>();
    for (String id : List.of("e1", "e2", "e3", "e4", "e5", "m1", "m2", "m3", "m4")) {
      deliveries.put(id, List.of(new Observation.Delivery("DELIVERED", 1)));
    }
    deliveries.put("e1", List.of(new Observation.Delivery("DELIVERED", 1), new Observation.Delivery("DELIVERED", 2)));
    deliveries.put("m1", List.of(new Observation.Delivery("DELIVERED", 1), new Observation.Delivery("DELIVERED", 1)));
    Map<IdempotencyKey, Observation.Analysis> analyses = Map.of(
        A.key(), new Observation.Analysis("analysed", null, null), B.key(),
        new Observation.Analysis("analysed", null, null));
    return new Observation(Map.of(A.name(), List.of("e1", "e2"), B.name(), List.of("e3", "e4")), deliveries, 0,
        analyses, messages, notified, Map.of(), JSON.createObjectNode().put("generateContent", geminiCalls));
  }

  private static DemoReport report(Stored stored, Observation observation) {
    JsonNode before = JSON.createObjectNode().put("generateContent", 0);
    return new Evaluation(stored, Mode.SYNC, List.of(A, B), observation, before, Map.of(), "demo/x/", List.of(), null,
        List.of()).report();
  }

  private static Map<IdempotencyKey, List<String>> oneMessageEach() {
    return Map.of(A.key(), List.of("m1"), B.key(), List.of("m2"));
  }

  @Test
  void everyDuplicateAbsorbed_passes_andTheRowsAddUp() {
    DemoReport report = report(new Stored(), observed(oneMessageEach(),
        Map.of(A.key().value(), 1, B.key().value(), 1), 2));
    assertTrue(report.ok(), report.problems().toString());
    DemoReport.Row analyse = report.rows().get(0);
    assertEquals(Effects.ANALYSE, analyse.effect());
    assertEquals(5, analyse.deliveries(), "four finalize notifications, one of them delivered again");
    assertEquals(2, analyse.performed());
    assertEquals(3, analyse.absorbed());
    DemoReport.Row notify = report.rows().get(2);
    assertEquals(3, notify.deliveries());
    assertEquals(1, notify.absorbed());
    assertTrue(report.notes().contains("Gemini spend: this demo's analyses 644 µUSD (billing); 2026-11-30: 966 µUSD"
        + " spent, 21021 reserved (the budget's counters)"), report.notes().toString());
  }

  @Test
  void aSecondBill_aSecondGeminiCall_aSecondMessage_aSecondNotification_eachFailTheDemo() {
    Stored stored = new Stored();
    stored.billedB = 2;
    Map<IdempotencyKey, List<String>> messages = Map.of(A.key(), List.of("m1"), B.key(), List.of("m2", "m3"));
    DemoReport report = report(stored, observed(messages, Map.of(A.key().value(), 1, B.key().value(), 2), 3));

    assertFalse(report.ok());
    String problems = String.join("\n", report.problems());
    assertTrue(problems.contains("ran twice: " + B.key() + " was billed 2 times"), problems);
    assertTrue(problems.contains("Gemini generateContent was called 3 times for 2 analyses"), problems);
    assertTrue(problems.contains("ran twice: 2 results were published for " + B.key()), problems);
    assertTrue(problems.contains(B.name() + " was notified 2 times"), problems);
    assertTrue(report.render().stream().anyMatch(l -> l.contains("verdict: FAILED")));
  }

  @Test
  void aDocumentNeverNotified_orStillClaimed_isLost() {
    Stored stored = new Stored();
    stored.states.put(B.key() + "|" + Effects.NOTIFY, RecordState.CLAIMED);
    DemoReport report = report(stored, observed(oneMessageEach(), Map.of(A.key().value(), 1), 2));

    String problems = String.join("\n", report.problems());
    assertTrue(problems.contains("lost: " + B.name() + " was never notified"), problems);
    assertTrue(problems.contains("notify of " + B.key() + " is still claimed"), problems);
  }
}
