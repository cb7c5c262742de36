package dev.once.terraform.check;

import com.github.javaparser.JavaParser;
import com.github.javaparser.ParseResult;
import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.FieldDeclaration;
import com.github.javaparser.ast.body.TypeDeclaration;
import com.github.javaparser.ast.body.VariableDeclarator;
import com.github.javaparser.ast.expr.StringLiteralExpr;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The main Java sources of the modules that run against a real Google project, parsed: every module the parent pom
 * lists except those that never do ({@link #NOT_AGAINST_GOOGLE}). A new module is read without any change here, and
 * a class moving between modules changes nothing. Also indexes the {@code static final String} constants (an
 * interface's {@code String} fields included) by class and name, so that checks can resolve {@code RecordWrites.ANALYSES}
 * or {@code FirestoreLedger.STATE} to their text.
 */
public final class JavaSources {
  /** Modules whose code only ever talks to emulators and stand-ins (or is this check), with the reason. */
  public static final Map<String, String> NOT_AGAINST_GOOGLE = Map.of(
      "wire", "the shapes of Google's events and a loopback HTTP server, for the test kit and the stand-ins",
      "local", "stand-ins and emulator launchers for tests and dev/run",
      "testing", "the library's test kit: in-memory fakes for tests",
      "bench", "benchmarks, run against the emulators",
      "terraform/check", "this check");

  private static final Pattern MODULE = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>");

  /** One parsed file: its path relative to the repository root and its syntax tree. */
  public record Source(String path, CompilationUnit unit) {
    public String className() {
      return unit.getPrimaryTypeName().orElse(Path.of(path).getFileName().toString().replace(".java", ""));
    }
  }

  private final List<Source> sources;
  private final List<Finding> problems;
  private final Map<String, String> constants; // "Class.NAME" -> text
  private final Map<String, List<String>> constantsByName; // "NAME" -> texts of every class

  private JavaSources(List<Source> sources, List<Finding> problems) {
    this.sources = List.copyOf(sources);
    this.problems = List.copyOf(problems);
    this.constants = new LinkedHashMap<>();
    this.constantsByName = new HashMap<>();
    for (Source source : sources) {
      for (TypeDeclaration<?> type : source.unit().findAll(TypeDeclaration.class)) {
        // An interface's fields are static and final without saying so.
        boolean implicit = type instanceof ClassOrInterfaceDeclaration declared && declared.isInterface();
        for (FieldDeclaration field : type.getFields()) {
          if (!implicit && (!field.isStatic() || !field.isFinal())) {
            continue;
          }
          for (VariableDeclarator variable : field.getVariables()) {
            variable.getInitializer().filter(StringLiteralExpr.class::isInstance).ifPresent(init -> {
              String text = ((StringLiteralExpr) init).asString();
              constants.put(type.getNameAsString() + "." + variable.getNameAsString(), text);
              constantsByName.computeIfAbsent(variable.getNameAsString(), k -> new ArrayList<>()).add(text);
            });
          }
        }
      }
    }
  }

  /** The modules of {@code root/pom.xml} that run against Google, their {@code src/main/java} parsed. */
  public static JavaSources of(Path root) {
    List<Finding> problems = new ArrayList<>();
    List<String> modules = modules(root.resolve("pom.xml"));
    for (String excluded : NOT_AGAINST_GOOGLE.keySet()) {
      if (!modules.contains(excluded)) {
        problems.add(new Finding("JavaSources.java", "NOT_AGAINST_GOOGLE", excluded
            + " is listed but pom.xml has no such module.", "remove it from JavaSources.NOT_AGAINST_GOOGLE."));
      }
    }
    List<String> roots = modules.stream().filter(m -> !NOT_AGAINST_GOOGLE.containsKey(m))
        .map(m -> m + "/src/main/java").filter(r -> Files.isDirectory(root.resolve(r))).toList();
    return parse(root, roots, problems);
  }

  /** The given source roots (relative to {@code root}), parsed. */
  public static JavaSources parse(Path root, List<String> sourceRoots) {
    return parse(root, sourceRoots, new ArrayList<>());
  }

  private static JavaSources parse(Path root, List<String> sourceRoots, List<Finding> problems) {
    JavaParser parser = new JavaParser(new ParserConfiguration()
        .setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_21));
    List<Source> sources = new ArrayList<>();
    for (String sourceRoot : sourceRoots) {
      try (Stream<Path> files = Files.walk(root.resolve(sourceRoot))) {
        for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
          String path = root.relativize(file).toString().replace('\\', '/');
          ParseResult<CompilationUnit> result = parser.parse(Files.readString(file, StandardCharsets.UTF_8));
          if (result.isSuccessful() && result.getResult().isPresent()) {
            sources.add(new Source(path, result.getResult().get()));
          } else {
            problems.add(
                new Finding(path, "(whole file)", "does not parse as Java 21, so its Firestore use is not checked: "
                    + result.getProblems(), "fix the syntax (the compiler says the same)."));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new JavaSources(sources, problems);
  }

  /** Two parsed trees as one (their paths must not collide). */
  public static JavaSources merge(JavaSources a, JavaSources b) {
    List<Source> sources = new ArrayList<>(a.sources);
    sources.addAll(b.sources);
    List<Finding> problems = new ArrayList<>(a.problems);
    problems.addAll(b.problems);
    return new JavaSources(sources, problems);
  }

  static List<String> modules(Path pom) {
    try {
      String text = Files.readString(pom, StandardCharsets.UTF_8).replaceAll("(?s)<!--.*?-->", "");
      List<String> modules = new ArrayList<>();
      Matcher m = MODULE.matcher(text);
      while (m.find()) {
        modules.add(m.group(1));
      }
      return modules;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public List<Source> sources() {
    return sources;
  }

  /** Files that could not be read, and stale entries of {@link #NOT_AGAINST_GOOGLE}. */
  public List<Finding> problems() {
    return problems;
  }

  /** The text of {@code Class.NAME}, when it is a {@code static final String} of the scanned code. */
  public Optional<String> constant(String className, String name) {
    return Optional.ofNullable(constants.get(className + "." + name));
  }

  /** The text of a constant known by its simple name only, when exactly one value is declared under that name. */
  public Optional<String> constant(String name) {
    List<String> texts = constantsByName.getOrDefault(name, List.of());
    return texts.stream().distinct().count() == 1 ? Optional.of(texts.get(0)) : Optional.empty();
  }
}
