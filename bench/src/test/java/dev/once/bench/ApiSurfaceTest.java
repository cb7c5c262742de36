package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's exported surface. From its compiled classes ({@link ApiSurface}): no public or protected signature of
 * an exported package names an internal type — not a parameter, a return, a supertype, a thrown type, a public
 * field, a type parameter's bound, nor a generic argument of any of them — in once-core, once-firestore nor the test
 * kit (once-testing). From their sources: every package is declared exported or lies under {@code dev.once.internal},
 * only the Firestore store (once-firestore) names a Google Cloud client's type, so once-core needs none, and the
 * exported packages hold at most {@value #BUDGET} public top-level types: the API and the store contract a store
 * implements (how few of them a function meets is checked by example/'s own test, on the README's functions). Here,
 * in the module built after the library's, because it reads both library modules and the kit.
 *
 * <p>Checked here rather than by a {@code module-info.java}: the functions run from the classpath (the invoker loads
 * one jar), where a module's exports are not enforced, and a module would put the Google client jars on the module
 * path as automatic modules for every compile and test of this one.
 */
class ApiSurfaceTest {
  static final int BUDGET = 60;
  static final Set<String> EXPORTED = Set.of("dev.once.budget", "dev.once.config", "dev.once.entry",
      "dev.once.firestore", "dev.once.guard", "dev.once.http", "dev.once.key", "dev.once.ledger", "dev.once.ledger.spi",
      "dev.once.observe");
  /** The store (once-firestore): the one place a Google Cloud client's types may be named. */
  static final Set<String> STORE = Set.of("dev.once.firestore", "dev.once.internal.firestore");
  /** The library's modules: once-core, then the store built on it. */
  static final List<String> LIBRARY = List.of("../core", "../firestore");
  private static final Path KIT_CLASSES = Path.of("../testing/target/classes");
  private static final Pattern PUBLIC_TYPE =
      Pattern.compile(
          "(?m)^public\\s+(?:(?:final|abstract|sealed|non-sealed)\\s+)*(?:class|interface|record|enum|@interface)\\s");
  /** A Google Cloud client's types (Firestore's, its Timestamp, gax); not the Functions Framework's API. */
  private static final Pattern GOOGLE_CLOUD = Pattern.compile("\\bcom\\.google\\.(?:cloud\\.(?!functions\\.)|api\\.)");

  @Test
  void noExportedSignature_namesAnInternalType_inTheLibraryOrItsTestKit() throws IOException {
    ClassLoader loader = getClass().getClassLoader();
    for (String module : LIBRARY) {
      assertEquals(List.of(), ApiSurface.leaks(Path.of(module, "target/classes"), loader, "dev.once."), module);
    }
    assertEquals(List.of(), ApiSurface.leaks(KIT_CLASSES, loader, "dev.once.testing."));
    assertTrue(Files.exists(KIT_CLASSES.resolve("dev/once/testing/Faults.class")), "the kit's classes were read");
  }

  /** A tree that leaks in every kind of signature: each is reported; what is not exported is not. */
  @Test
  void aLeakInAnySignature_isReported(@TempDir Path tree) throws Exception {
    SourceTree.write(tree, "dev/once/internal/Secret.java", "package dev.once.internal; public class Secret {}");
    SourceTree.write(tree, "dev/once/internal/Failure.java",
        "package dev.once.internal; public class Failure extends Exception {}");
    SourceTree.write(tree, "dev/once/guard/Leaks.java", """
        package dev.once.guard;
        import dev.once.internal.Failure;
        import dev.once.internal.Secret;
        import java.util.List;
        import java.util.Optional;
        public class Leaks<T extends Secret> implements java.util.function.Supplier<Optional<Secret>> {
          public Secret field;
          protected List<? super Secret> wildcard;
          private Secret hidden;
          public Leaks(Secret secret) {}
          public Optional<Secret> get() { return Optional.empty(); }
          public void take(Secret[] secrets) {}
          public void fails() throws Failure {}
          public <S extends Secret> void bound(S s) {}
          void packagePrivate(Secret secret) {}
          private Secret privateOne() { return null; }
          public static class Nested extends Secret {}
          static class NotExported extends Secret {}
        }
        """);
    SourceTree.write(tree, "dev/once/guard/Clean.java", """
        package dev.once.guard;
        public final class Clean { private dev.once.internal.Secret uses; public String name() { return ""; } }
        """);
    Path classes = compile(tree);
    try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, null)) {
      assertEquals(sorted(List.of(
          "dev.once.guard.Leaks implements names dev.once.internal.Secret",
          "dev.once.guard.Leaks type parameter T names dev.once.internal.Secret",
          "dev.once.guard.Leaks.field field names dev.once.internal.Secret",
          "dev.once.guard.Leaks.wildcard field names dev.once.internal.Secret",
          "dev.once.guard.Leaks(Secret) parameter names dev.once.internal.Secret",
          "dev.once.guard.Leaks.bound(Secret) parameter names dev.once.internal.Secret",
          "dev.once.guard.Leaks.bound(Secret) type parameter S names dev.once.internal.Secret",
          "dev.once.guard.Leaks.fails() throws names dev.once.internal.Failure",
          "dev.once.guard.Leaks.get() returns names dev.once.internal.Secret",
          "dev.once.guard.Leaks.take(Secret[]) parameter names dev.once.internal.Secret",
          "dev.once.guard.Leaks$Nested extends names dev.once.internal.Secret")),
          sorted(ApiSurface.leaks(classes, loader, "dev.once.")));
    }
  }

  @Test
  void theLibraryKeepsToItsBudgetAndItsStore() throws IOException {
    assertEquals(List.of(), violations(LIBRARY.stream().map(module -> Path.of(module, "src/main/java")).toList()));
  }

  @Test
  void aTypeBeyondTheBudget_aPackageNotDeclared_andGoogleCloudOutsideItsStore_areEachReported(@TempDir Path tree)
      throws IOException {
    for (int i = 0; i <= BUDGET; i++) {
      SourceTree.write(tree, "dev/once/guard/T" + i + ".java",
          "package dev.once.guard;\n\npublic final class T" + i + " {}\n");
    }
    SourceTree.write(tree, "dev/once/guard/Hidden.java", "package dev.once.guard;\n\nfinal class Hidden {}\n");
    SourceTree.write(tree, "dev/once/extra/X.java", "package dev.once.extra;\n\nfinal class X {}\n");
    SourceTree.write(tree, "dev/once/internal/ledger/Y.java",
        "package dev.once.internal.ledger;\n\nimport com.google.cloud.firestore.Firestore;\n\nfinal class Y {}\n");
    SourceTree.write(tree, "dev/once/internal/ledger/W.java",
        "package dev.once.internal.ledger;\n\nimport com.google.cloud.Timestamp;\n\nfinal class W {}\n");
    SourceTree.write(tree, "dev/once/entry/V.java",
        "package dev.once.entry;\n\nimport com.google.cloud.functions.HttpRequest;\n\nfinal class V {}\n");
    SourceTree.write(tree, "dev/once/internal/firestore/Z.java",
        "package dev.once.internal.firestore;\n\nimport com.google.cloud.firestore.Firestore;\n\nfinal class Z {}\n");

    assertEquals(List.of(
        "dev.once.extra is neither exported (ApiSurfaceTest.EXPORTED) nor under dev.once.internal",
        "dev/once/internal/ledger/W.java names a Google Cloud client's type outside the store " + STORE,
        "dev/once/internal/ledger/Y.java names a Google Cloud client's type outside the store " + STORE,
        "the exported packages hold " + (BUDGET + 1) + " public top-level types, more than " + BUDGET),
        violations(List.of(tree)));
  }

  static List<String> violations(List<Path> roots) throws IOException {
    List<String> found = new ArrayList<>();
    Set<String> packages = new TreeSet<>();
    int exported = 0;
    for (Path root : roots) {
      try (Stream<Path> files = Files.walk(root)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
          String relative = root.relativize(file).toString().replace('\\', '/');
          String pkg = relative.substring(0, relative.lastIndexOf('/')).replace('/', '.');
          String source = Files.readString(file);
          packages.add(pkg);
          if (EXPORTED.contains(pkg) && PUBLIC_TYPE.matcher(source).find()) {
            exported++;
          }
          if (!STORE.contains(pkg) && GOOGLE_CLOUD.matcher(source).find()) {
            found.add(relative + " names a Google Cloud client's type outside the store " + STORE);
          }
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

  private static List<String> sorted(List<String> lines) {
    return lines.stream().sorted().toList();
  }

  /** Compiles the tree's sources into a directory beside them. */
  private static Path compile(Path tree) throws IOException {
    Path classes = Files.createDirectories(tree.resolve("classes"));
    List<String> sources;
    try (Stream<Path> files = Files.walk(tree)) {
      sources = files.filter(f -> f.toString().endsWith(".java")).map(Path::toString).toList();
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> arguments = new ArrayList<>(List.of("-d", classes.toString(), "--release", "21"));
    arguments.addAll(sources);
    assertEquals(0, javac.run(null, null, null, arguments.toArray(String[]::new)), "the breaking tree compiles");
    return classes;
  }
}
