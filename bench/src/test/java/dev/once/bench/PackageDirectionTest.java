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
 * The deploy jar's packages import one way (docs/DESIGN.md, "Where things live"): the functions and their flows
 * ({@code dev.once.functions}) build on the pipeline's records, topics and signatures ({@code dev.once.pipeline}),
 * which build on the Gemini side ({@code dev.once.gemini}), which builds on neither; a package under one of them is
 * of its layer. A name against that flow, imported (a wildcard too) or fully qualified in code, is reported with its
 * file and line; comments and strings name nothing.
 */
class PackageDirectionTest {
  private static final Path FUNCTIONS = Path.of("..", "functions", "src", "main", "java");
  /** Lowest first: a package may name the ones before it, never one after it. */
  static final List<String> LAYERS = List.of("dev.once.gemini", "dev.once.pipeline", "dev.once.functions");
  /** A type of a layer or of a package under it, or all of one (a wildcard import). */
  private static final Pattern NAMED =
      Pattern.compile("\\b(dev\\.once\\.(?:gemini|pipeline|functions))(?:\\.[a-z]\\w*)*\\.(?:[A-Z]|\\*)");

  @Test
  void theFunctionsPackages_importOneWay() throws IOException {
    assertEquals(List.of(), violations(FUNCTIONS));
  }

  @Test
  void anImportOrAQualifiedName_againstTheFlow_isReported_butNotACommentOrAString(@TempDir Path tree)
      throws IOException {
    SourceTree.write(tree, "dev/once/gemini/A.java", """
        package dev.once.gemini;
        import dev.once.pipeline.Records;
        /** Not {@link dev.once.functions.Wiring}. */
        final class A { Object b = dev.once.functions.Wiring.class; }
        """);
    SourceTree.write(tree, "dev/once/pipeline/C.java", """
        package dev.once.pipeline;
        import static dev.once.functions.Wiring.BUDGET;
        import dev.once.gemini.Analysis;
        final class C {}
        """);
    SourceTree.write(tree, "dev/once/gemini/batch/E.java", """
        package dev.once.gemini.batch;
        import dev.once.pipeline.*;
        final class E { String s = "dev.once.functions.Wiring"; }
        """);
    SourceTree.write(tree, "dev/once/functions/D.java", """
        package dev.once.functions;
        import dev.once.gemini.Analysis;
        import dev.once.pipeline.Records;
        final class D {}
        """);

    assertEquals(List.of(
        "dev/once/gemini/A.java:2 names dev.once.pipeline",
        "dev/once/gemini/A.java:4 names dev.once.functions",
        "dev/once/gemini/batch/E.java:2 names dev.once.pipeline",
        "dev/once/pipeline/C.java:2 names dev.once.functions"),
        violations(tree));
  }

  static List<String> violations(Path sources) throws IOException {
    List<String> found = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(sources)) {
      files = walk.filter(f -> f.toString().endsWith(".java")).sorted().toList();
    }
    int layered = 0;
    for (Path file : files) {
      String relative = sources.relativize(file).toString().replace('\\', '/');
      String[] parts = relative.split("/");
      int rank = parts.length > 3 ? LAYERS.indexOf(parts[0] + "." + parts[1] + "." + parts[2]) : -1;
      if (rank < 0) {
        continue;
      }
      layered++;
      String code = SourceTree.codeOnly(Files.readString(file));
      Matcher named = NAMED.matcher(code);
      while (named.find()) {
        if (LAYERS.indexOf(named.group(1)) > rank) {
          long line = code.substring(0, named.start()).chars().filter(c -> c == '\n').count() + 1;
          found.add(relative + ":" + line + " names " + named.group(1));
        }
      }
    }
    assertTrue(layered > 0, "no sources of the layered packages under " + sources);
    return found;
  }
}
