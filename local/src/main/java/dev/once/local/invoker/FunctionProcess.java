package dev.once.local.invoker;

import dev.once.local.Bounds;
import dev.once.local.process.ChildProcess;
import dev.once.local.process.Jvm;
import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One function served by the real Functions Framework invoker in its own JVM, as Cloud Functions runs it: the
 * invoker jar, the function's deployable jar on its classpath, the target class, and the environment that
 * configures it. Tests kill it with SIGKILL to crash it mid-event.
 */
public final class FunctionProcess implements AutoCloseable {

  private final String target;
  private final int port;
  private final ChildProcess process;

  private FunctionProcess(String target, int port, ChildProcess process) {
    this.target = target;
    this.port = port;
    this.process = process;
  }

  /** What to run: the invoker, the function's jar (and jars before it on the class path), and extra JVM flags. */
  public record Launch(Path invokerJar, Path functionJar, List<String> jvmArgs, List<Path> before) {
    public Launch(Path invokerJar, Path functionJar, List<String> jvmArgs) {
      this(invokerJar, functionJar, jvmArgs, List.of());
    }

    String classpath() {
      List<String> entries = new ArrayList<>();
      before.forEach(jar -> entries.add(jar.toString()));
      entries.add(functionJar.toString());
      return String.join(File.pathSeparator, entries);
    }
  }

  /** Starts the invoker and returns once it listens: it binds its port only after loading the function class. */
  public static FunctionProcess start(Launch launch, String target, int port, Map<String, String> env, Path log) {
    FunctionProcess function = launch(launch, target, port, env, log);
    // Five invokers start at once beside two other forks doing the same: at a load of 30 that passed 90 s. An exit
    // ends the wait at once, so the bound is only for a process that hangs.
    function.process.awaitReady(() -> ChildProcess.listening(port), Bounds.START, Duration.ofMillis(50));
    return function;
  }

  /** Starts the invoker without waiting for it (a benchmark times its start itself). */
  public static FunctionProcess launch(Launch launch, String target, int port, Map<String, String> env, Path log) {
    List<String> command = new ArrayList<>(List.of(Jvm.java()));
    command.addAll(launch.jvmArgs());
    command.addAll(List.of("-jar", launch.invokerJar().toString(), "--classpath", launch.classpath(),
        "--target", target, "--port", String.valueOf(port)));
    String name = target.substring(target.lastIndexOf('.') + 1);
    return new FunctionProcess(target, port, ChildProcess.start(name, command, env, log));
  }

  public URI url() {
    return URI.create("http://127.0.0.1:" + port + "/");
  }

  public String target() {
    return target;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return process.log();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The process itself: its exit, whether it was stopped on purpose. */
  public ChildProcess process() {
    return process;
  }

  /** SIGKILL: no shutdown hook, no finally block runs — a crash. */
  public void kill() {
    process.kill();
  }

  @Override
  public void close() {
    process.close();
  }
}
