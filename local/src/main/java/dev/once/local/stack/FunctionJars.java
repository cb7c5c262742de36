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
 * of the working directory, which is the repository root for the {@code dev/} scripts. {@code once.testingJar}, set
 * by the functions' integration tests only, names the test kit's jar, put before the deploy jar so its crash points
 * ({@code -Donce.crash.at}) can kill a function; dev/run never sets it.
 */
public record FunctionJars(Path invokerJar, Path functionJar, List<Path> before) {
  public static FunctionJars locate() {
    Path target = Path.of("functions", "target");
    String invoker = System.getProperty("once.invokerJar");
    String function = System.getProperty("once.functionJar");
    String testing = System.getProperty("once.testingJar");
    return new FunctionJars(
        invoker != null ? Path.of(invoker) : target.resolve("invoker/java-function-invoker.jar"),
        function != null ? Path.of(function) : deployJar(target),
        testing == null || testing.isBlank() ? List.of() : List.of(Path.of(testing)));
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
    return new FunctionProcess.Launch(invokerJar, functionJar, jvmFlags, before);
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
