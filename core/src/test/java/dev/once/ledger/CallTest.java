package dev.once.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.internal.ledger.Calls;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A try's outcome as records already in Firestore hold it: the same strings, read back as the same values. */
class CallTest {
  private static final Instant AT = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void eachOutcome_isStoredUnderItsOldName_andReadBack() {
    assertEquals(List.of("running", "done", "rejected", "failed", "not_performed", "abandoned"),
        Arrays.stream(Call.Outcome.values()).map(Call.Outcome::stored).toList());
    for (Call.Outcome outcome : Call.Outcome.values()) {
      Call call = new Call(2, AT, outcome, "why");
      assertEquals(outcome.stored(), Calls.stored(call).get("outcome"));
      assertEquals(call, Calls.read(Calls.stored(call)));
    }
  }

  @Test
  void anOutcomeThisVersionDoesNotKnow_readsAsATryThatMayHaveRun() {
    Call read = Calls.read(Map.of("number", 1L, "outcome", "vanished"));
    assertEquals(Call.Outcome.FAILED, read.outcome());
    assertTrue(read.spent());
    assertFalse(new Call(1, AT, Call.Outcome.NOT_PERFORMED, null).spent());
  }
}
