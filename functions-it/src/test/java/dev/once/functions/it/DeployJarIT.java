package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * What is deployed is the functions, not bench/'s way into their wiring: the deploy jar holds the five entry points
 * and no {@code Benchmarks}, which the {@code benchmarks} jar beside it holds alone (issue 39: no back door in the
 * deploy jar).
 */
class DeployJarIT {
  private static final List<String> FUNCTIONS = List.of("DocumentUploaded", "MessageDelivered", "BatchCompleted",
      "GeminiWebhook", "GeminiReconciler");

  @Test
  void theDeployJar_holdsTheFunctions_andNotTheBenchmarksWayIn() throws IOException {
    try (JarFile jar = new JarFile(System.getProperty("once.functionJar"))) {
      for (String function : FUNCTIONS) {
        assertTrue(jar.getEntry("dev/once/functions/" + function + ".class") != null, function + " is deployed");
      }
      assertEquals(List.of(), jar.stream().map(ZipEntry::getName)
          .filter(name -> name.startsWith("dev/once/functions/Benchmarks")).toList(), "nothing of Benchmarks deployed");
    }
  }

  @Test
  void theBenchmarksJar_holdsBenchmarksAlone() throws IOException {
    try (JarFile jar = new JarFile(System.getProperty("once.benchmarksJar"))) {
      List<String> classes = jar.stream().map(ZipEntry::getName).filter(name -> name.endsWith(".class")).toList();
      assertTrue(classes.contains("dev/once/functions/Benchmarks.class"), classes.toString());
      assertTrue(classes.stream().allMatch(name -> name.startsWith("dev/once/functions/Benchmarks")),
          classes.toString());
    }
  }
}
