package dev.once.local.stack;

import dev.once.local.invoker.FunctionProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The functions' deploy jar and the Functions Framework invoker that serves it, as the functions module's build
 * leaves them ({@code mvn -pl functions -am package}). System properties {@code once.functionJar} and
 * {@code once.invokerJar} name them explicitly (tests do); otherwise they are looked up under {@code functions/target}
 * of the working directory, which is the repository root for the {@code dev/} scripts.
 */
public record FunctionJars(Path invokerJar, Path functionJar) {
  public static FunctionJars locate() {
    Path target = Path.of("functions", "target");
    String invoker = System.getProperty("once.invokerJar");
    String function = System.getProperty("once.functionJar");
    return new FunctionJars(
        invoker != null ? Path.of(invoker) : target.resolve("invoker/java-function-invoker.jar"),
        function != null ? Path.of(function) : deployJar(target));
  }

  private static Path deployJar(Path target) {
    try (Stream<Path> files = Files.list(target)) {
      return files.filter(p -> p.getFileName().toString().matches("once-functions-.*-deploy\\.jar")).findFirst()
          .orElse(target.resolve("once-functions-deploy.jar"));
    } catch (IOException e) {
      return target.resolve("once-functions-deploy.jar");
    }
  }

  /** How to run a function from these jars, with these JVM flags. */
  public FunctionProcess.Launch launch(List<String> jvmFlags) {
    return new FunctionProcess.Launch(invokerJar, functionJar, jvmFlags);
  }

  /** Throws with the command that builds them when either is missing. */
  public FunctionJars check() {
    for (Path jar : new Path[] {invokerJar, functionJar}) {
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException("the functions are not built: " + jar + " is missing (build them with"
            + " 'mvn -pl functions -am package -DskipTests'; dev/run does this itself)");
      }
    }
    return this;
  }
}
