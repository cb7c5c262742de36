package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** README's "Write your own effectively-once function" shows CreateNote as it is: the copy cannot drift. */
class ReadmeTest {
  private static final Path README = Path.of("..", "README.md");
  private static final Path SOURCE = Path.of("src/main/java/dev/once/example/CreateNote.java");

  @Test
  void theFunctionIsAtMostFifteenLines_besidesItsPackageImportsAndComments() throws IOException {
    long code = withoutPackageAndImports(Files.readAllLines(SOURCE, StandardCharsets.UTF_8)).lines()
        .map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("/**") && !line.startsWith("*")
            && !line.startsWith("//")).count();
    assertTrue(code <= 15, SOURCE + " has " + code + " lines of code; README promises at most 15");
  }

  @Test
  void readmeShowsCreateNote_asTheFileIs_withoutItsPackageAndImports() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    String code = withoutPackageAndImports(Files.readAllLines(SOURCE, StandardCharsets.UTF_8));

    assertTrue(readme.contains("```java\n" + code + "```\n"), "README.md's copy of " + SOURCE + " differs from the"
        + " file: paste the file from its class comment down into the ```java block of \"Write your own"
        + " effectively-once function\"");
  }

  /** The lines from the first one after the imports, each with its newline. */
  static String withoutPackageAndImports(List<String> lines) {
    int first = 0;
    while (first < lines.size() && (lines.get(first).isBlank() || lines.get(first).startsWith("package ")
        || lines.get(first).startsWith("import "))) {
      first++;
    }
    StringBuilder code = new StringBuilder();
    lines.subList(first, lines.size()).forEach(line -> code.append(line).append('\n'));
    return code.toString();
  }
}
