package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.stack.LocalStack;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The key dev/run's Gemini stand-in accepts is written out in the docs a user copies from: each copy is the key
 * (a wrong one is answered 400 "API key not valid", and every document waits for a fix).
 */
class StandInKeyDocsTest {
  /** {@code GEMINI_API_KEY=value} in a command, or "takes the key `value`" in prose; "…" is a placeholder. */
  private static final Pattern KEY = Pattern.compile("GEMINI_API_KEY=([^\\s`…\\\\]+)|takes the key `([^`]+)`");

  @Test
  void everyKeyTheDocsGiveForTheStandIn_isTheOneItAccepts() throws IOException {
    int copies = 0;
    for (Path doc : List.of(Path.of("..", "docs", "LOCAL.md"), Path.of("..", "docs", "OPERATIONS.md"))) {
      Matcher key = KEY.matcher(Files.readString(doc, StandardCharsets.UTF_8));
      while (key.find()) {
        copies++;
        assertEquals(LocalStack.STAND_IN_KEY, key.group(1) != null ? key.group(1) : key.group(2),
            doc + ": " + key.group());
      }
    }
    assertTrue(copies >= 3, "the docs' copies were found (" + copies + ")");
  }
}
