package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * README stays the short contract (what it is, the two commands, the layout, the settings) and the rest lives in
 * docs/: every relative link of the project's Markdown files names a file that exists, and, into a Markdown file, a
 * heading it has, so moving a section cannot leave a link behind.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final int README_MAX_LINES = 300;
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$", Pattern.MULTILINE);
  private static final Pattern FENCE = Pattern.compile("^```.*?^```", Pattern.MULTILINE | Pattern.DOTALL);

  @Test
  void readme_isAtMost300Lines() throws IOException {
    long lines = Files.readAllLines(ROOT.resolve("README.md"), StandardCharsets.UTF_8).size();
    assertTrue(lines <= README_MAX_LINES, "README.md has " + lines + " lines: move detail into docs/ and link it");
  }

  @Test
  void everyRelativeLink_namesAFileThatExists_andAHeadingItHas() throws IOException {
    List<String> broken = new ArrayList<>();
    Map<Path, Set<String>> anchors = new HashMap<>();
    List<Path> files = markdownFiles();
    assertTrue(files.size() >= 8, "found " + files);
    for (Path file : files) {
      Matcher link = LINK.matcher(withoutCode(Files.readString(file, StandardCharsets.UTF_8)));
      while (link.find()) {
        String target = link.group(1);
        if (target.matches("[a-z]+:.*")) {
          continue; // https:, mailto:
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        String where = ROOT.relativize(file) + ": (" + target + ")";
        if (!Files.exists(resolved)) {
          broken.add(where + " names no file");
        } else if (hash >= 0 && resolved.toString().endsWith(".md")
            && !anchors.computeIfAbsent(resolved, DocsLinksTest::anchorsOf).contains(target.substring(hash + 1))) {
          broken.add(where + " names no heading of " + ROOT.relativize(resolved));
        }
      }
    }
    assertEquals(List.of(), broken);
  }

  @Test
  void anchors_areSpelledAsGitHubSpellsThem() {
    assertEquals("the-demo-devrun---demo-devdemo", anchor("The demo: `dev/run --demo`, `dev/demo`"));
    assertEquals("once--how-it-works-and-what-proves-it", anchor("once — how it works, and what proves it"));
    assertEquals("mvn-functionrun-one-function-with-googles-plugin",
        anchor("`mvn function:run`: one function with Google's plugin"));
  }

  /** Every tracked-looking Markdown file: the top level and docs/, and each module's README. */
  private static List<Path> markdownFiles() throws IOException {
    try (Stream<Path> paths = Files.walk(ROOT, 3)) {
      return paths.filter(p -> p.toString().endsWith(".md"))
          .filter(p -> ROOT.relativize(p).getNameCount() == 1 || p.startsWith(ROOT.resolve("docs"))
              || p.getFileName().toString().equals("README.md") && !p.toString().contains("node_modules")
                  && !p.toString().contains("/target/"))
          .sorted().toList();
    }
  }

  private static Set<String> anchorsOf(Path file) {
    try {
      Set<String> anchors = new HashSet<>();
      Map<String, Integer> seen = new HashMap<>();
      Matcher heading = HEADING.matcher(withoutCode(Files.readString(file, StandardCharsets.UTF_8)));
      while (heading.find()) {
        String anchor = anchor(heading.group(1));
        int n = seen.merge(anchor, 1, Integer::sum);
        anchors.add(n == 1 ? anchor : anchor + "-" + (n - 1));
      }
      return anchors;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** GitHub's rule: lower case, punctuation dropped (letters, digits, blanks, - and _ kept), each blank a hyphen. */
  static String anchor(String heading) {
    return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }

  private static String withoutCode(String markdown) {
    return FENCE.matcher(markdown).replaceAll("");
  }
}
