package dev.once.local.invoker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One function served by the real Functions Framework invoker in its own JVM, as Cloud Functions runs it: the
 * invoker jar, the function's deployable jar on its classpath, the target class, and the environment that
 * configures it. Tests kill it with SIGKILL to crash it mid-event.
 */
public final class FunctionProcess implements AutoCloseable {
  private static final Duration START_DEADLINE = Duration.ofSeconds(90);

  private final String target;
  private final int port;
  private final Path log;
  private final Process process;

  private FunctionProcess(String target, int port, Path log, Process process) {
    this.target = target;
    this.port = port;
    this.log = log;
    this.process = process;
  }

  /** What to run: the invoker, the function's jar, and extra JVM flags (may be empty). */
  public record Launch(Path invokerJar, Path functionJar, List<String> jvmArgs) {}

  public static FunctionProcess start(Launch launch, String target, int port, Map<String, String> env, Path log) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(launch.jvmArgs());
    command.addAll(List.of("-jar", launch.invokerJar().toString(), "--classpath", launch.functionJar().toString(),
        "--target", target, "--port", String.valueOf(port)));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(env);
    try {
      Files.createDirectories(log.toAbsolutePath().getParent());
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      FunctionProcess function = new FunctionProcess(target, port, log, builder.start());
      Runtime.getRuntime().addShutdownHook(new Thread(function::close, "stop-" + target));
      function.awaitListening();
      return function;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the invoker for " + target, e);
    }
  }

  /** The invoker binds its port only after loading the function class: a connection means it is serving. */
  private void awaitListening() {
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(target + " exited with " + process.exitValue() + " while starting; see " + log);
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while starting " + target, e);
        }
      }
    }
    close();
    throw new IllegalStateException(target + " did not listen on port " + port + " within " + START_DEADLINE + "; see " + log);
  }

  public URI url() {
    return URI.create("http://127.0.0.1:" + port + "/");
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL: no shutdown hook, no finally block runs — a crash. */
  public void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        kill();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      kill();
    }
  }
}
