package dev.once.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ForeignTextTest {
  private static final String FACE = "\uD83D\uDE00"; // one character outside the BMP: two UTF-16 chars

  @Test
  void aTextWithinTheLength_isKeptAsItIs_andNullStaysNull() {
    assertEquals("invoice", ForeignText.cut("invoice", 7));
    assertEquals(FACE.repeat(3), ForeignText.cut(FACE.repeat(3), 6));
    assertNull(ForeignText.cut(null, 5));
  }

  @Test
  void aLongerText_isCutToTheLength_andSaysSo() {
    assertEquals("invo…", ForeignText.cut("invoice", 4));
    assertEquals("x".repeat(200) + ForeignText.CUT, ForeignText.cut("x".repeat(10_000), 200));
  }

  /** Cut where a pair would be split, the pair goes whole: every result is well-formed UTF-16, at any length. */
  @Test
  void aCharacterOutsideTheBmp_isNeverSplit() {
    String text = "a" + FACE.repeat(50);
    for (int chars = 1; chars < text.length(); chars++) {
      String cut = ForeignText.cut(text, chars);
      assertTrue(cut.endsWith(ForeignText.CUT) && cut.length() - 1 <= chars, chars + ": " + cut);
      assertTrue(wellFormed(cut), chars + ": half a pair in " + cut);
    }
    assertEquals("a…", ForeignText.cut(text, 2));
    assertEquals("a" + FACE + "…", ForeignText.cut(text, 3));
  }

  @Test
  void aLengthBelowOne_isRefused() {
    assertThrows(IllegalArgumentException.class, () -> ForeignText.cut("text", 0));
  }

  private static boolean wellFormed(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
