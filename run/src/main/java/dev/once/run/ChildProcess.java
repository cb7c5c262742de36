package dev.once.run;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One stand-in JVM ({@code dev.once.local.*} or the notification endpoint): started from this JVM's classpath with
 * its output in a log file, ready once it printed {@code READY <name> <url>} there (the stand-ins' contract).
 */
final class ChildProcess implements AutoCloseable {
  /** Generous: on a busy machine a JVM can take a minute to start; the emulators and invoker get 90 s too. */
  private static final Duration START_DEADLINE = Duration.ofSeconds(120);
  static final Duration STOP_GRACE = Duration.ofSeconds(10);

  private final String name;
  private final Process process;
  private final Path log;
  private final String url;

  private ChildProcess(String name, Process process, Path log, String url) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.url = url;
  }

  /**
   * Starts {@code mainClass} with {@code args}; {@code started} sees the process before it is ready, so a caller
   * that must stop everything (Ctrl-C during start-up) knows its pid.
   */
  static ChildProcess start(String name, String mainClass, List<String> args, Path log, Consumer<Process> started) {
    List<String> command = new ArrayList<>(Jvm.command(List.of("-Xmx256m")));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
    command.addAll(args);
    Process process;
    try {
      Files.createDirectories(log.toAbsolutePath().getParent());
      process = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the " + name, e);
    }
    started.accept(process);
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    while (true) {
      Optional<String> url = readyUrl(log);
      if (url.isPresent()) {
        return new ChildProcess(name, process, log, url.get());
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("the " + name + " exited with " + process.exitValue() + " while starting: "
            + lastLines(log, 3) + " (see " + log + ")");
      }
      if (System.nanoTime() - deadline > 0) {
        stop(process);
        throw new IllegalStateException("the " + name + " printed no READY line within " + START_DEADLINE + "; see " + log);
      }
      pause(Duration.ofMillis(50));
    }
  }

  private static Optional<String> readyUrl(Path log) {
    try {
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        if (line.startsWith("READY ")) {
          return Optional.of(line.substring(line.lastIndexOf(' ') + 1).strip());
        }
      }
    } catch (IOException | UncheckedIOException e) {
      // not written yet
    }
    return Optional.empty();
  }

  static String lastLines(Path log, int count) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(no log)";
    }
  }

  private static void pause(Duration duration) {
    try {
      Thread.sleep(duration);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting", e);
    }
  }

  String name() {
    return name;
  }

  String url() {
    return url;
  }

  Path log() {
    return log;
  }

  long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    stop(process);
  }

  /** SIGTERM (the stand-ins close their servers in a shutdown hook), then SIGKILL after a grace period. */
  static void stop(Process process) {
    stop(process.toHandle());
  }

  static void stop(ProcessHandle handle) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    try {
      handle.onExit().get(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      handle.destroyForcibly();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      handle.destroyForcibly();
      try {
        handle.onExit().get(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
      } catch (Exception ignored) {
        // nothing more can be done to a process that survives SIGKILL
      }
    }
  }
}
