package dev.once.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The jars the function benchmarks serve, named by system properties that dev/bench sets after building them
 * ({@code -pl functions,bench -am package}); a missing one stops the benchmark with the command that builds it.
 */
public final class Artifacts {
  private Artifacts() {}

  public static Path invokerJar() {
    return existing("once.invokerJar");
  }

  /**
   * A copy of the deploy jar taken when first asked for, so a build that replaces the jar while a benchmark runs
   * (dev/test, another dev/bench) cannot pull it from under the JVMs serving it.
   */
  public static synchronized Path functionJar() {
    if (functionJarCopy == null) {
      functionJarCopy = copied("once.functionJar");
    }
    return functionJarCopy;
  }

  private static Path functionJarCopy;

  /**
   * {@code dev.once.functions.Benchmarks} alone: the deploy jar leaves it out, so a JVM serving that jar for a
   * benchmark (the unguarded baseline, the probe) has it from here. A copy too, taken with the deploy jar's, as it
   * calls into that jar's package-private classes.
   */
  public static synchronized Path benchmarksJar() {
    if (benchmarksJarCopy == null) {
      functionJar();
      benchmarksJarCopy = copied("once.benchmarksJar");
    }
    return benchmarksJarCopy;
  }

  private static Path benchmarksJarCopy;

  /** A copy of the jar {@code property} names, under target/jar-copies, deleted when this JVM exits. */
  private static Path copied(String property) {
    Path jar = existing(property);
    try {
      Path dir = Files.createDirectories(Path.of("target", "jar-copies"));
      Path copy = dir.resolve(ProcessHandle.current().pid() + "-" + jar.getFileName());
      Files.copy(jar, copy, StandardCopyOption.REPLACE_EXISTING);
      copy.toFile().deleteOnExit();
      return copy;
    } catch (IOException e) {
      throw new UncheckedIOException("could not copy " + jar, e);
    }
  }

  public static Path helloJar() {
    return existing("once.helloJar");
  }

  /** The unguarded baseline function, served with the deploy jar on the class path. */
  public static Path unguardedJar() {
    return existing("once.unguardedJar");
  }

  /** This module's compiled classes, for the probe that runs in a JVM of its own. */
  public static Path benchClasses() {
    return existing("once.benchClasses");
  }

  private static Path existing(String property) {
    String value = System.getProperty(property);
    if (value == null || !Files.exists(Path.of(value))) {
      throw new IllegalStateException("-D" + property + " must name an existing file (got " + value
          + "); run the benchmarks with dev/bench, which builds them: mvn -pl functions,bench -am package -DskipTests");
    }
    return Path.of(value);
  }
}
