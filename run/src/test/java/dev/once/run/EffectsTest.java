package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The run module's copy of the effect names cannot drift from the functions' own list. */
class EffectsTest {
  @Test
  void effectNames_areTheFunctionsOwn() throws Exception {
    Path source = Path.of("..", "functions", "src", "main", "java", "dev", "once", "functions", "Effects.java");
    Matcher names = Pattern.compile("static final String \\w+ = \"([^\"]+)\"").matcher(Files.readString(source));
    Set<String> functions = new TreeSet<>();
    while (names.find()) {
      functions.add(names.group(1));
    }
    assertEquals(functions, new TreeSet<>(Effects.ALL), "dev.once.run.Effects must list what " + source + " defines");
  }
}
