package dev.once.terraform.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * No deployed code reads the environment around the registry: outside the Setting enums and
 * {@code Settings}, a {@code System.getenv} call must name, as a literal, a variable that one of them lists.
 * Otherwise a new variable could be read in production without the environment check ever knowing it exists.
 * Only the main code of the deployed modules is scanned (core/, firestore/ and functions/, which the deploy jar bundles).
 */
public final class GetenvScan {
  /** The main source roots of the modules in the deploy jar. */
  public static final List<String> DEPLOYED_SOURCES =
      List.of("core/src/main/java", "firestore/src/main/java", "functions/src/main/java");
  /** The registry itself may read the whole environment. */
  private static final Set<String> REGISTRY = CodeSettings.REGISTRY;

  private static final Pattern GETENV = Pattern.compile("\\bgetenv\\s*\\(\\s*");
  private static final Pattern LITERAL_ARGUMENT = Pattern.compile("\\G\"([^\"\\\\]*)\"\\s*\\)");
  private static final Pattern MAP_LOOKUP =
      Pattern.compile("\\G\\)\\s*\\.\\s*(?:get|getOrDefault|containsKey)\\s*\\(\\s*\"([^\"\\\\]*)\"");

  private final Path root;
  private final List<String> sourceRoots;
  private final Set<String> settings;

  public GetenvScan(Path root, List<String> sourceRoots, Set<String> settings) {
    this.root = root;
    this.sourceRoots = List.copyOf(sourceRoots);
    this.settings = Set.copyOf(settings);
  }

  public List<Finding> findings() {
    List<Finding> findings = new ArrayList<>();
    for (String sourceRoot : sourceRoots) {
      Path dir = root.resolve(sourceRoot);
      if (!Files.isDirectory(dir)) {
        findings.add(new Finding(sourceRoot, "(directory)", "does not exist, so its getenv calls are not checked.",
            "update GetenvScan.DEPLOYED_SOURCES to the deployed modules' main source roots."));
        continue;
      }
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
          String relative = dir.relativize(file).toString().replace('\\', '/');
          if (!REGISTRY.contains(relative)) {
            scan(sourceRoot + "/" + relative, Files.readString(file, StandardCharsets.UTF_8), findings);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return findings;
  }

  void scan(String name, String source, List<Finding> findings) {
    String code = withoutComments(source);
    Matcher call = GETENV.matcher(code);
    while (call.find()) {
      int line = 1 + (int) code.substring(0, call.start()).chars().filter(c -> c == '\n').count();
      String where = "line " + line;
      Matcher literal = LITERAL_ARGUMENT.matcher(code).region(call.end(), code.length());
      Matcher lookup = MAP_LOOKUP.matcher(code).region(call.end(), code.length());
      String variable = literal.lookingAt() ? literal.group(1) : lookup.lookingAt() ? lookup.group(1) : null;
      if (variable == null) {
        findings.add(new Finding(name, where, "reads the environment with a name the check cannot see.",
            "read settings through dev.once.config.Settings (add the variable to PipelineSetting)."));
      } else if (!settings.contains(variable)) {
        findings.add(new Finding(name, where, "reads " + variable + ", which no Setting enum lists,"
            + " so Terraform's environment is never checked against it.",
            "add " + variable + " to PipelineSetting and read it through Settings."));
      }
    }
  }

  /** The source with comments blanked (newlines kept, so line numbers stay right) and string literals intact. */
  static String withoutComments(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    while (i < source.length()) {
      char c = source.charAt(i);
      if (c == '"' || c == '\'') {
        int end = i + 1;
        if (source.startsWith("\"\"\"", i)) {
          end = source.indexOf("\"\"\"", i + 3);
          end = end < 0 ? source.length() : end + 3;
        } else {
          while (end < source.length() && source.charAt(end) != c && source.charAt(end) != '\n') {
            end += source.charAt(end) == '\\' ? 2 : 1;
          }
          end = Math.min(end + 1, source.length());
        }
        out.append(source, i, end);
        i = end;
      } else if (source.startsWith("//", i)) {
        while (i < source.length() && source.charAt(i) != '\n') {
          i++;
        }
      } else if (source.startsWith("/*", i)) {
        int end = source.indexOf("*/", i + 2);
        end = end < 0 ? source.length() : end + 2;
        source.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
        i = end;
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }
}
