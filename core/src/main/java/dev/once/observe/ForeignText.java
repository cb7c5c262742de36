package dev.once.observe;

/**
 * Text someone else wrote (an uploader's object name, a model's answer, Google's error messages) held to a length
 * before it reaches a record, a message or a log line: anyone can upload, and a name or an answer can be megabytes.
 * One cut for all of them, so none splits a character.
 */
public final class ForeignText {
  /** What a text that was cut ends with. */
  public static final String CUT = "…";

  private ForeignText() {}

  /**
   * {@code text} if it is at most {@code chars} UTF-16 characters (null stays null); else its first {@code chars}, or
   * one fewer where they would end in half a surrogate pair (Firestore and JSON writers store a lone half as "?"),
   * and {@link #CUT}.
   */
  public static String cut(String text, int chars) {
    if (chars < 1) {
      throw new IllegalArgumentException("a text is cut to at least one character, not " + chars);
    }
    if (text == null || text.length() <= chars) {
      return text;
    }
    int end = Character.isHighSurrogate(text.charAt(chars - 1)) ? chars - 1 : chars;
    return text.substring(0, end) + CUT;
  }
}
