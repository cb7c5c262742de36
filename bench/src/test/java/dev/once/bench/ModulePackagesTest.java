package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No package is shared between modules (issue 22): a class that put itself in another module's package to reach its
 * package-private parts (bench/ once did, in dev.once.functions) is a split package, which a module path refuses and
 * which hides what is really the other module's API. Main and test sources of every module, example/ included.
 */
class ModulePackagesTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void eachPackage_livesInOneModule() throws IOException {
    Map<String, Set<String>> modulesByPackage = new TreeMap<>();
    List<Path> sourceRoots;
    try (Stream<Path> paths = Files.find(ROOT, 6, (path, attributes) -> attributes.isDirectory()
        && path.getFileName().toString().equals("java") && path.getParent().getParent().getFileName().toString()
            .equals("src")
        && !path.toString().contains("/target/") && !path.toString().contains("/.git/"))) {
      sourceRoots = paths.toList();
    }
    for (Path sources : sourceRoots) {
      String module = ROOT.relativize(sources.getParent().getParent().getParent()).toString();
      try (Stream<Path> files = Files.walk(sources)) {
        files.filter(file -> file.toString().endsWith(".java")).map(file -> sources.relativize(file.getParent()))
            .forEach(dir -> modulesByPackage.computeIfAbsent(dir.toString().replace('/', '.'), p -> new TreeSet<>())
                .add(module));
      }
    }
    assertTrue(modulesByPackage.keySet().containsAll(Set.of("dev.once.bench", "dev.once.functions", "dev.once.guard")),
        "the scan found the modules' sources: " + modulesByPackage.keySet());
    Map<String, Set<String>> shared = new TreeMap<>(modulesByPackage);
    shared.values().removeIf(modules -> modules.size() < 2);
    assertEquals(Map.of(), shared, "packages in more than one module");
  }
}
