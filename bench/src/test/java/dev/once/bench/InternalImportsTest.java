package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * This project is the library's first user (DESIGN decision 20): functions/, cli/, bench/, run/ and example/ (main and
 * test sources), and the test kit testing/, use its public API only, and name nothing under {@code dev.once.internal}
 * — not in an import, not fully qualified in code. What they need becomes public, for every user.
 */
class InternalImportsTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final List<String> USERS = List.of("functions", "cli", "bench", "run", "example", "testing");
  private static final Pattern INTERNAL = Pattern.compile("\\bdev\\.once\\.internal\\b[\\w.]*");
  /** Spelt in two parts, so this file names nothing internal itself. */
  private static final String INTERNAL_PACKAGE = "dev.once." + "internal";

  @Test
  void theLibrarysUsers_nameNothingInternal() throws IOException {
    assertEquals(List.of(), violations(ROOT));
  }

  @Test
  void anImportOrAQualifiedName_ofAnInternalType_isReported_butNotACommentOrAString(@TempDir Path tree)
      throws IOException {
    SourceTree.write(tree, "functions/src/main/java/dev/once/functions/A.java", """
        package dev.once.functions;
        import %1$s.ledger.Claim;
        /** Not {@code %1$s.ledger.Claim}. */
        final class A { String named = "%1$s.ledger.Claim"; }
        """.formatted(INTERNAL_PACKAGE));
    SourceTree.write(tree, "example/src/test/java/dev/once/example/B.java", """
        package dev.once.example;
        // %1$s is mentioned here only
        final class B { Object c = new %1$s.observe.Trace("a", "b"); }
        """.formatted(INTERNAL_PACKAGE));
    SourceTree.write(tree, "core/src/main/java/dev/once/guard/C.java", """
        package dev.once.guard;
        import %1$s.ledger.Claim;
        final class C {}
        """.formatted(INTERNAL_PACKAGE));

    assertEquals(List.of(
        "example/src/test/java/dev/once/example/B.java:3 names " + INTERNAL_PACKAGE + ".observe.Trace",
        "functions/src/main/java/dev/once/functions/A.java:2 names " + INTERNAL_PACKAGE + ".ledger.Claim"),
        violations(tree));
  }

  static List<String> violations(Path root) throws IOException {
    List<String> found = new ArrayList<>();
    int scanned = 0;
    for (String module : USERS) {
      Path sources = root.resolve(module).resolve("src");
      if (!Files.isDirectory(sources)) {
        continue;
      }
      List<Path> files;
      try (Stream<Path> walk = Files.walk(sources)) {
        files = walk.filter(f -> f.toString().endsWith(".java")).sorted().toList();
      }
      for (Path file : files) {
        scanned++;
        String code = SourceTree.codeOnly(Files.readString(file));
        Matcher internal = INTERNAL.matcher(code);
        while (internal.find()) {
          long line = code.substring(0, internal.start()).chars().filter(c -> c == '\n').count() + 1;
          found.add(root.relativize(file).toString().replace('\\', '/') + ":" + line + " names " + internal.group());
        }
      }
    }
    assertTrue(scanned > 0, "no sources found under " + root);
    return found.stream().sorted().toList();
  }
}
