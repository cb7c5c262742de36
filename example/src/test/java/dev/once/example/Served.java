package dev.once.example;

import dev.once.local.emulator.FreePort;
import dev.once.local.invoker.FunctionProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** An example function served from the deployable jar by the real invoker, in its own JVM, as the platform would. */
final class Served {
  private Served() {}

  static FunctionProcess start(Class<?> function, Map<String, String> env) {
    return start(function, env, List.of());
  }

  /** The same, with {@code before} ahead of the deployable jar on its class path (a test's own function, say). */
  static FunctionProcess start(Class<?> function, Map<String, String> env, List<Path> before) {
    Path logDir = Path.of(System.getProperty("once.logDir", "target/it-logs"));
    FunctionProcess.Launch launch = new FunctionProcess.Launch(Path.of(System.getProperty("once.invokerJar")),
        Path.of(System.getProperty("once.functionJar")), List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"), before);
    return FunctionProcess.start(launch, function.getName(), FreePort.pick(), env,
        logDir.resolve(function.getSimpleName() + "-" + ProcessHandle.current().pid() + ".log"));
  }
}
