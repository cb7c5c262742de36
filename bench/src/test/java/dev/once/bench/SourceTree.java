package dev.once.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the tests that read the source tree share: writing a tree to break, and reading its code alone. */
final class SourceTree {
  private SourceTree() {}

  /** {@code text} as the file {@code relative} under {@code root}, its directories made. */
  static void write(Path root, String relative, String text) throws IOException {
    Path file = root.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }

  /**
   * The code alone: comments, string and character literals (text blocks too) blanked out, their line breaks kept so
   * line numbers stay true. A name in a string or a comment names nothing.
   */
  static String codeOnly(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    while (i < source.length()) {
      char c = source.charAt(i);
      int end;
      String blank;
      if (source.startsWith("//", i)) {
        end = source.indexOf('\n', i);
        end = end < 0 ? source.length() : end;
        blank = "";
      } else if (source.startsWith("/*", i)) {
        end = source.indexOf("*/", i + 2);
        end = end < 0 ? source.length() : end + 2;
        blank = " ";
      } else if (source.startsWith("\"\"\"", i)) {
        end = source.indexOf("\"\"\"", i + 3);
        end = end < 0 ? source.length() : end + 3;
        blank = "\"\"";
      } else if (c == '"' || c == '\'') {
        end = i + 1;
        while (end < source.length() && source.charAt(end) != c) {
          end += source.charAt(end) == '\\' ? 2 : 1;
        }
        end = Math.min(end + 1, source.length());
        blank = String.valueOf(c) + c;
      } else {
        out.append(c);
        i++;
        continue;
      }
      out.append(blank);
      source.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
      i = end;
    }
    return out.toString();
  }
}
