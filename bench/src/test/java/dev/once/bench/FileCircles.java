package dev.once.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which source files name which, read from their code (comments and literals left out: a javadoc link is no
 * dependency): their imports, the types of their own package they name, and fully qualified names. A circle is a
 * set of files each of which reaches every other: an interface that names its implementation, an internal class
 * that names the public one wrapping it.
 */
final class FileCircles {
  private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+)\\s*;");
  private static final Pattern IMPORT = Pattern.compile("(?m)^import\\s+(static\\s+)?([\\w.]+)(\\.\\*)?\\s*;");
  private static final Pattern QUALIFIED = Pattern.compile("\\b((?:[a-z]\\w*\\.)+[A-Z]\\w*)");
  private static final Pattern IDENTIFIER = Pattern.compile("\\b[A-Z]\\w*\\b");

  private FileCircles() {}

  /** Each circle among the sources under {@code root}, as its files (relative paths, sorted), circles sorted. */
  static List<List<String>> circles(Path root) throws IOException {
    Map<String, Path> byType = new TreeMap<>();
    Map<Path, String> code = new HashMap<>();
    Map<Path, String> packages = new HashMap<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
        String text = SourceTree.codeOnly(Files.readString(file));
        Matcher pkg = PACKAGE.matcher(text);
        String name = pkg.find() ? pkg.group(1) : "";
        String simple = file.getFileName().toString().replace(".java", "");
        byType.put(name.isEmpty() ? simple : name + "." + simple, file);
        code.put(file, text);
        packages.put(file, name);
      }
    }
    Map<Path, Set<Path>> names = new TreeMap<>();
    for (Map.Entry<Path, String> entry : code.entrySet()) {
      Path file = entry.getKey();
      Set<Path> named = new TreeSet<>();
      String text = entry.getValue();
      Matcher imports = IMPORT.matcher(text);
      while (imports.find()) {
        resolve(imports.group(2), byType).ifPresent(named::add);
      }
      String body = IMPORT.matcher(PACKAGE.matcher(text).replaceAll("")).replaceAll("");
      Matcher qualified = QUALIFIED.matcher(body);
      while (qualified.find()) {
        resolve(qualified.group(1), byType).ifPresent(named::add);
      }
      String pkg = packages.get(file);
      Matcher identifiers = IDENTIFIER.matcher(body);
      while (identifiers.find()) {
        Path same = byType.get(pkg.isEmpty() ? identifiers.group() : pkg + "." + identifiers.group());
        if (same != null) {
          named.add(same);
        }
      }
      named.remove(file);
      names.put(file, named);
    }
    List<List<String>> circles = new ArrayList<>();
    for (Set<Path> component : stronglyConnected(names)) {
      if (component.size() > 1) {
        circles.add(component.stream().map(f -> root.relativize(f).toString().replace('\\', '/')).sorted().toList());
      }
    }
    circles.sort((a, b) -> a.toString().compareTo(b.toString()));
    return circles;
  }

  /** The file of the longest prefix of {@code name} that is a type of the tree ({@code a.B.C} is in a/B.java). */
  private static Optional<Path> resolve(String name, Map<String, Path> byType) {
    for (String candidate = name; candidate.contains("."); candidate =
        candidate.substring(0, candidate.lastIndexOf('.'))) {
      Path file = byType.get(candidate);
      if (file != null) {
        return Optional.of(file);
      }
    }
    return Optional.empty();
  }

  /** Tarjan's strongly connected components. */
  private static List<Set<Path>> stronglyConnected(Map<Path, Set<Path>> graph) {
    Map<Path, Integer> index = new HashMap<>();
    Map<Path, Integer> low = new HashMap<>();
    Deque<Path> stack = new ArrayDeque<>();
    Set<Path> onStack = new HashSet<>();
    List<Set<Path>> components = new ArrayList<>();
    int[] counter = {0};
    for (Path start : graph.keySet()) {
      if (!index.containsKey(start)) {
        connect(start, graph, index, low, stack, onStack, components, counter);
      }
    }
    return components;
  }

  private static void connect(Path node, Map<Path, Set<Path>> graph, Map<Path, Integer> index,
      Map<Path, Integer> low, Deque<Path> stack, Set<Path> onStack, List<Set<Path>> components, int[] counter) {
    index.put(node, counter[0]);
    low.put(node, counter[0]);
    counter[0]++;
    stack.push(node);
    onStack.add(node);
    for (Path next : graph.getOrDefault(node, Set.of())) {
      if (!index.containsKey(next)) {
        connect(next, graph, index, low, stack, onStack, components, counter);
        low.put(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.contains(next)) {
        low.put(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node).equals(index.get(node))) {
      Set<Path> component = new TreeSet<>();
      Path member;
      do {
        member = stack.pop();
        onStack.remove(member);
        component.add(member);
      } while (!member.equals(node));
      components.add(component);
    }
  }
}
