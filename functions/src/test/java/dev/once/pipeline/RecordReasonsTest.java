package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A reason a record keeps is someone else's text (Google's, the model's), bounded as every such text is. */
class RecordReasonsTest {
  @Test
  void aLongReason_isCutAtTheBound_neverBetweenTheHalvesOfACharacter() {
    // The first half of a pair where the cut falls (index MAX_TEXT_CHARS - 1).
    String reason = "x".repeat(RecordWrites.MAX_TEXT_CHARS - 1) + "\uD83D\uDE00".repeat(50);

    String kept = RecordWrites.bounded(reason);

    assertEquals("x".repeat(RecordWrites.MAX_TEXT_CHARS - 1) + "…", kept);
    assertTrue(kept.codePoints().noneMatch(c -> Character.isSurrogate((char) c)), "no half character");
    assertEquals("\uD83D\uDE00 short", RecordWrites.bounded("\uD83D\uDE00 short"), "a short reason is kept whole");
    assertNull(RecordWrites.bounded(null));
  }
}
