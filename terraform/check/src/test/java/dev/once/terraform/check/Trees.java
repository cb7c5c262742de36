package dev.once.terraform.check;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The repository's terraform/ tree and broken copies of it. Copies are declared up front ({@link Copy}) and parsed
 * together in one Node run, which keeps the whole suite within seconds. They are written under
 * terraform/check/target/broken-copies, where a failing test's copy can be inspected.
 */
final class Trees {
  static final Path ROOT = Path.of(System.getProperty("once.root", "../..")).toAbsolutePath().normalize();
  static final Path TERRAFORM = ROOT.resolve("terraform");
  static final Path COPIES = TERRAFORM.resolve("check/target/broken-copies");
  static final HclParser PARSER = new HclParser(TERRAFORM.resolve("check"));

  private static TerraformConfig real;

  private Trees() {}

  static synchronized TerraformConfig real() {
    if (real == null) {
      real = PARSER.parse(TERRAFORM);
    }
    return real;
  }

  /** A copy of terraform/ with one edit: one text replaced in one file, or one file added. */
  static final class Copy {
    private static final List<Copy> ALL = new ArrayList<>();

    private final String file;
    private final String from; // null: add `to` as a new file
    private final String to;
    private TerraformConfig config;
    private String problem;

    private Copy(String file, String from, String to) {
      this.file = file;
      this.from = from;
      this.to = to;
      synchronized (Trees.class) {
        ALL.add(this);
      }
    }

    /** The copy with the first occurrence of {@code from} in {@code file} replaced by {@code to}. */
    static Copy replacing(String file, String from, String to) {
      return new Copy(file, from, to);
    }

    /** The copy with one more file. */
    static Copy adding(String file, String content) {
      return new Copy(file, null, content);
    }

    TerraformConfig config() {
      parsePending();
      if (problem != null) {
        fail(problem);
      }
      return config;
    }

    private void writeTo(Path dir) throws IOException {
      Files.createDirectories(dir);
      try (Stream<Path> files = Files.list(TERRAFORM)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          Files.copy(f, dir.resolve(f.getFileName().toString()));
        }
      }
      Path target = dir.resolve(file);
      if (from == null) {
        Files.writeString(target, to, StandardCharsets.UTF_8);
        return;
      }
      String text = Files.readString(target, StandardCharsets.UTF_8);
      Matcher at = alignmentTolerant(from).matcher(text);
      if (!at.find()) {
        problem = "this broken copy needs \"" + from + "\" in " + file + "; did terraform/ change?";
        return;
      }
      Files.writeString(target, text.substring(0, at.start()) + to + text.substring(at.end()), StandardCharsets.UTF_8);
    }
  }

  /**
   * {@code text} as a pattern in which a run of blanks matches any run of blanks: terraform fmt realigns the
   * {@code =} of a whole block when one key grows, and the broken copies should not care.
   */
  static Pattern alignmentTolerant(String text) {
    StringBuilder pattern = new StringBuilder();
    for (String part : text.split("(?<=[ \t])(?=[^ \t])|(?<=[^ \t])(?=[ \t])")) {
      pattern.append(part.isBlank() && !part.contains("\n") ? "[ \\t]+" : Pattern.quote(part));
    }
    return Pattern.compile(pattern.toString());
  }

  /** Writes and parses every declared copy not parsed yet, in one Node run. */
  private static synchronized void parsePending() {
    List<Copy> pending = Copy.ALL.stream().filter(c -> c.config == null && c.problem == null).toList();
    if (pending.isEmpty()) {
      return;
    }
    try {
      List<Path> dirs = new ArrayList<>();
      List<Copy> written = new ArrayList<>();
      for (Copy copy : pending) {
        Path dir = COPIES.resolve("copy-" + Copy.ALL.indexOf(copy));
        deleteRecursively(dir);
        copy.writeTo(dir);
        if (copy.problem == null) {
          dirs.add(dir);
          written.add(copy);
        }
      }
      Map<Path, TerraformConfig> parsed = PARSER.parseAll(dirs);
      for (int i = 0; i < written.size(); i++) {
        written.get(i).config = parsed.get(dirs.get(i));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  static void assertClean(List<Finding> findings) {
    if (!findings.isEmpty()) {
      fail(findings.size() + " finding(s):\n"
          + findings.stream().map(Finding::toString).collect(Collectors.joining("\n")));
    }
  }

  /** Exactly one finding, in {@code file}, whose text holds every fragment. */
  static Finding assertOneFinding(List<Finding> findings, String file, String... fragments) {
    assertEquals(1, findings.size(), () -> "expected one finding, got:\n"
        + findings.stream().map(Finding::toString).collect(Collectors.joining("\n")));
    Finding finding = findings.get(0);
    assertEquals(file, finding.file(), finding::toString);
    for (String fragment : fragments) {
      assertTrue(finding.toString().contains(fragment), () -> "\"" + fragment + "\" missing from: " + finding);
    }
    return finding;
  }
}
