package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The docs show the example functions as they are, so the copies cannot drift, and as short as they say: README's
 * CreateNote without its imports, docs/LIBRARY.md's SendWelcome and CreateCharge whole, each within its bound of lines
 * (every line besides package, imports and blank lines: comments count) and of library types named (imported from
 * the library, or named in full).
 */
class ReadmeTest {
  private static final Path README = Path.of("..", "README.md");
  private static final Path LIBRARY = Path.of("..", "docs", "LIBRARY.md");
  private static final Path SOURCES = Path.of("src/main/java/dev/once/example");
  /** A library type named in full in the code, not imported. */
  private static final Pattern LIBRARY_NAME = Pattern.compile("\\bdev\\.once\\.(?!example\\.)[a-z.]+\\.[A-Z]\\w*");

  @Test
  void readmeShowsCreateNote_asTheFileIs_withoutItsPackageAndImports() throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    String code =
        withoutPackageAndImports(Files.readAllLines(SOURCES.resolve("CreateNote.java"), StandardCharsets.UTF_8));

    assertTrue(readme.contains("```java\n" + code + "```\n"), "README.md's copy of CreateNote.java differs from the"
        + " file: paste the file from its class comment down into the ```java block of \"Write your own"
        + " effectively-once function\"");
  }

  @ParameterizedTest
  @ValueSource(strings = {"SendWelcome.java", "CreateCharge.java"})
  void libraryDocShowsTheFunction_whole_asTheFileIs(String file) throws IOException {
    String doc = Files.readString(LIBRARY, StandardCharsets.UTF_8);
    String code = Files.readString(SOURCES.resolve(file), StandardCharsets.UTF_8);

    assertTrue(doc.contains("```java\n" + code + "```\n"), "docs/LIBRARY.md's copy of " + file + " differs from the"
        + " file: paste the whole file, imports included, into its ```java block");
  }

  @Test
  void createNote_isAtMostFifteenLines() throws IOException {
    assertAtMost("CreateNote.java", 15, 4);
  }

  /**
   * The two functions of docs/LIBRARY.md: at most 25 lines besides imports, at most 7 of the library's types (6 until
   * the store to deploy became a module of its own: a function names it, {@code FirestoreOnce}, to build its guard).
   */
  @ParameterizedTest
  @ValueSource(strings = {"SendWelcome.java", "CreateCharge.java"})
  void theLibraryDocsFunctions_areAtMost25Lines_naming7LibraryTypes(String file) throws IOException {
    assertAtMost(file, 25, 7);
  }

  private static void assertAtMost(String file, int lines, int types) throws IOException {
    List<String> source = Files.readAllLines(SOURCES.resolve(file), StandardCharsets.UTF_8);
    String body = withoutPackageAndImports(source);
    long code = body.lines().filter(line -> !line.isBlank()).count();
    Set<String> named = new TreeSet<>();
    source.stream().filter(line -> line.startsWith("import dev.once.") && !line.startsWith("import dev.once.example."))
        .forEach(line -> named.add(line.substring("import ".length(), line.length() - 1)));
    LIBRARY_NAME.matcher(body).results().map(MatchResult::group).forEach(named::add);
    assertTrue(code <= lines, file + " has " + code + " lines besides its imports; the docs promise at most " + lines);
    assertTrue(named.size() <= types, file + " names " + named.size() + " library types, more than " + types + ": "
        + named);
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
