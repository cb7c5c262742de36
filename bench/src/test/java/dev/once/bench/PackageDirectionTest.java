package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deploy jar's packages import one way (docs/DESIGN.md, "Where things live"): the functions' entry points and
 * their wiring ({@code dev.once.functions}) build on the features under it — the analysis of an upload, the batch
 * gathering, a job's completion, the reconciler, the webhook, the delivery — which build on the pipeline's records,
 * topics and signatures ({@code dev.once.pipeline}), which build on the Gemini side ({@code dev.once.gemini}), which
 * builds on neither. A feature names another only as {@link #ALLOWED} says (the reconciler drives three of them; an
 * upload in batch mode asks the gathering to submit what is due), never the entry points. A package under one of
 * these is of it. A name against that flow, imported (a wildcard too) or fully qualified in code, is reported with
 * its file and line; comments and strings name nothing.
 */
class PackageDirectionTest {
  private static final Path FUNCTIONS = Path.of("..", "functions", "src", "main", "java");
  private static final String F = "dev.once.functions";
  /** Each unit of the deploy jar, and the units it may name besides itself. */
  static final Map<String, Set<String>> ALLOWED = Map.of(
      "dev.once.gemini", Set.of(),
      "dev.once.pipeline", Set.of("dev.once.gemini"),
      F + ".delivery", Set.of("dev.once.pipeline", "dev.once.gemini"),
      F + ".webhook", Set.of("dev.once.pipeline", "dev.once.gemini"),
      F + ".completion", Set.of("dev.once.pipeline", "dev.once.gemini"),
      F + ".gathering", Set.of("dev.once.pipeline", "dev.once.gemini"),
      F + ".analysis", Set.of(F + ".gathering", "dev.once.pipeline", "dev.once.gemini"),
      F + ".reconcile", Set.of(F + ".analysis", F + ".gathering", F + ".completion", "dev.once.pipeline",
          "dev.once.gemini"),
      F, Set.of(F + ".delivery", F + ".webhook", F + ".completion", F + ".gathering", F + ".analysis",
          F + ".reconcile", "dev.once.pipeline", "dev.once.gemini"));
  /** The package of a type named in code (a wildcard import names its package). */
  private static final Pattern NAMED =
      Pattern.compile("\\b(dev\\.once\\.(?:gemini|pipeline|functions)(?:\\.[a-z]\\w*)*)\\.(?:[A-Z]|\\*)");

  @Test
  void theFunctionsPackages_importOneWay() throws IOException {
    assertEquals(List.of(), violations(FUNCTIONS));
  }

  @Test
  void anImportOrAQualifiedName_againstTheFlow_isReported_butNotACommentOrAString(@TempDir Path tree)
      throws IOException {
    SourceTree.write(tree, "dev/once/gemini/A.java", """
        package dev.once.gemini;
        import dev.once.pipeline.RecordWrites;
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
        import dev.once.functions.reconcile.ReconcileFlow;
        import dev.once.gemini.Analysis;
        import dev.once.pipeline.RecordWrites;
        final class D {}
        """);
    SourceTree.write(tree, "dev/once/functions/gathering/G.java", """
        package dev.once.functions.gathering;
        import dev.once.functions.Wiring;
        import dev.once.pipeline.RecordWrites;
        final class G { Object d = dev.once.functions.analysis.DocumentFlow.class; }
        """);
    SourceTree.write(tree, "dev/once/functions/reconcile/R.java", """
        package dev.once.functions.reconcile;
        import dev.once.functions.analysis.DocumentFlow;
        import dev.once.functions.completion.CompletionFlow;
        import dev.once.functions.delivery.DeliveryFlow;
        final class R {}
        """);

    assertEquals(List.of(
        "dev/once/functions/gathering/G.java:2 names dev.once.functions",
        "dev/once/functions/gathering/G.java:4 names dev.once.functions.analysis",
        "dev/once/functions/reconcile/R.java:4 names dev.once.functions.delivery",
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
      int slash = relative.lastIndexOf('/');
      String unit = unitOf(slash < 0 ? "" : relative.substring(0, slash).replace('/', '.'));
      if (unit == null) {
        continue;
      }
      layered++;
      String code = SourceTree.codeOnly(Files.readString(file));
      Matcher named = NAMED.matcher(code);
      while (named.find()) {
        String other = unitOf(named.group(1));
        if (other != null && !other.equals(unit) && !ALLOWED.get(unit).contains(other)) {
          long line = code.substring(0, named.start()).chars().filter(c -> c == '\n').count() + 1;
          found.add(relative + ":" + line + " names " + other);
        }
      }
    }
    assertTrue(layered > 0, "no sources of the layered packages under " + sources);
    return found;
  }

  /** The unit a package belongs to: the longest of {@link #ALLOWED}'s that it is or is under (null: none). */
  private static String unitOf(String pkg) {
    return ALLOWED.keySet().stream().filter(unit -> pkg.equals(unit) || pkg.startsWith(unit + "."))
        .max(Comparator.comparingInt(String::length)).orElse(null);
  }
}
