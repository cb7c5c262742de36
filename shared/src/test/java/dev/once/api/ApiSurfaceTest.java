package dev.once.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's exported surface, read from its sources: the API packages hold at most {@value #BUDGET} public
 * top-level types, every other package is under {@code dev.once.internal}, and only the Firestore store names
 * Firestore's types. Checked here rather than by a {@code module-info.java}: the functions run from the classpath
 * (the invoker loads one jar), where a module's exports are not enforced, and a module would put the Google client
 * jars on the module path as automatic modules for every compile and test of this one.
 */
class ApiSurfaceTest {
  static final int BUDGET = 25;
  static final Set<String> EXPORTED = Set.of("dev.once.guard", "dev.once.key", "dev.once.ledger",
      "dev.once.firestore", "dev.once.config", "dev.once.entry", "dev.once.observe");
  /** The store: the one place Firestore's own types may be named. */
  static final Set<String> STORE = Set.of("dev.once.firestore", "dev.once.internal.firestore");
  private static final Path SOURCES = Path.of("src/main/java");
  private static final Pattern PUBLIC_TYPE =
      Pattern.compile("(?m)^public\\s+(?:(?:final|abstract|sealed|non-sealed)\\s+)*(?:class|interface|record|enum|@interface)\\s");
  private static final Pattern FIRESTORE = Pattern.compile("\\bcom\\.google\\.cloud\\.firestore\\.");

  @Test
  void theLibraryKeepsToItsBudgetAndItsStore() throws IOException {
    assertEquals(List.of(), violations(SOURCES));
  }

  @Test
  void aTypeBeyondTheBudget_aPackageNotDeclared_andFirestoreOutsideItsStore_areEachReported(@TempDir Path tree)
      throws IOException {
    for (int i = 0; i <= BUDGET; i++) {
      write(tree, "dev/once/guard/T" + i + ".java", "package dev.once.guard;\n\npublic final class T" + i + " {}\n");
    }
    write(tree, "dev/once/guard/Hidden.java", "package dev.once.guard;\n\nfinal class Hidden {}\n");
    write(tree, "dev/once/extra/X.java", "package dev.once.extra;\n\nfinal class X {}\n");
    write(tree, "dev/once/internal/ledger/Y.java",
        "package dev.once.internal.ledger;\n\nimport com.google.cloud.firestore.Firestore;\n\nfinal class Y {}\n");
    write(tree, "dev/once/internal/firestore/Z.java",
        "package dev.once.internal.firestore;\n\nimport com.google.cloud.firestore.Firestore;\n\nfinal class Z {}\n");

    assertEquals(List.of(
        "dev.once.extra is neither exported (ApiSurfaceTest.EXPORTED) nor under dev.once.internal",
        "dev/once/internal/ledger/Y.java names a Firestore type outside the store " + STORE,
        "the exported packages hold 26 public top-level types, more than " + BUDGET),
        violations(tree));
  }

  static List<String> violations(Path root) throws IOException {
    List<String> found = new java.util.ArrayList<>();
    Set<String> packages = new TreeSet<>();
    int exported = 0;
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        String relative = root.relativize(file).toString().replace('\\', '/');
        String pkg = relative.substring(0, relative.lastIndexOf('/')).replace('/', '.');
        String source = Files.readString(file);
        packages.add(pkg);
        if (EXPORTED.contains(pkg) && PUBLIC_TYPE.matcher(source).find()) {
          exported++;
        }
        if (!STORE.contains(pkg) && FIRESTORE.matcher(source).find()) {
          found.add(relative + " names a Firestore type outside the store " + STORE);
        }
      }
    }
    packages.stream().filter(p -> !EXPORTED.contains(p) && !p.startsWith("dev.once.internal"))
        .forEach(p -> found.add(0, p + " is neither exported (ApiSurfaceTest.EXPORTED) nor under dev.once.internal"));
    if (exported > BUDGET) {
      found.add("the exported packages hold " + exported + " public top-level types, more than " + BUDGET);
    }
    return found;
  }

  private static void write(Path root, String relative, String text) throws IOException {
    Path file = root.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }
}
