package dev.once.local.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A program this JVM starts (an emulator, a function under the invoker, a benchmark's probe), its output appended
 * to a log file. Stopped with SIGTERM and, after a grace period, SIGKILL: by {@link #close()}, or when this JVM
 * exits, so no test or runner leaves one behind.
 */
public final class ChildProcess implements AutoCloseable {
  public static final Duration STOP_GRACE = Duration.ofSeconds(10);
  private static final Set<ChildProcess> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(ChildProcess::close), "stop-children"));
  }

  private final String name;
  private final Process process;
  private final Path log;
  private volatile boolean stopped;

  private ChildProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /** Starts {@code command} with {@code env} added to this JVM's environment; does not wait for anything. */
  public static ChildProcess start(String name, List<String> command, Map<String, String> env, Path log) {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(env);
    try {
      Files.createDirectories(log.toAbsolutePath().getParent());
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      ChildProcess child = new ChildProcess(name, builder.start(), log);
      LIVE.add(child);
      return child;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + name, e);
    }
  }

  /**
   * Polls {@code ready} every {@code poll} until it holds. If the process exits first, or {@code deadline} passes
   * (the process is then stopped), throws with what the log says.
   */
  public void awaitReady(BooleanSupplier ready, Duration deadline, Duration poll) {
    long end = System.nanoTime() + deadline.toNanos();
    while (!ready.getAsBoolean()) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + " while starting: "
            + lastLines(3) + " (see " + log + ")");
      }
      if (System.nanoTime() - end > 0) {
        close();
        throw new IllegalStateException(name + " was not ready within " + deadline + "; see " + log);
      }
      LockSupport.parkNanos(poll.toNanos());
      if (Thread.interrupted()) {
        close();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting " + name);
      }
    }
  }

  /** True when something accepts connections on 127.0.0.1:{@code port}. */
  public static boolean listening(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException notYet) {
      return false;
    }
  }

  /** The last {@code count} non-blank lines of the log, joined with " | ". */
  public String lastLines(int count) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).toList();
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(no log)";
    }
  }

  public String name() {
    return name;
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

  /** Completes when the process exits, for whatever reason. */
  public CompletableFuture<Process> onExit() {
    return process.onExit();
  }

  /** True once {@link #close()} or {@link #kill()} was called: an exit after that is no news. */
  public boolean stopped() {
    return stopped;
  }

  /** SIGKILL: no shutdown hook, no finally block runs — a crash. Returns once it has exited. */
  public void kill() {
    stopped = true;
    process.destroyForcibly();
    exited(process);
    LIVE.remove(this);
  }

  /** SIGTERM, then SIGKILL after {@link #STOP_GRACE}. */
  @Override
  public void close() {
    stopped = true;
    if (process.isAlive()) {
      process.destroy();
      if (!exited(process)) {
        process.destroyForcibly();
        exited(process);
      }
    }
    LIVE.remove(this);
  }

  /** SIGTERM, then SIGKILL after {@link #STOP_GRACE}: for any process, e.g. a descendant this JVM has no handle of. */
  public static void stop(ProcessHandle handle) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    if (!gone(handle)) {
      handle.destroyForcibly();
      gone(handle);
    }
  }

  /*
   * Neither waits on onExit(): the JDK completes those futures on CompletableFuture's default executor, which on a
   * 2-core machine is the common pool with one thread, so a test that waits for minutes on that pool (a background
   * check) held every kill and stop for the whole grace period (a kill took 10 s, a stop 20 s).
   */

  private static boolean exited(Process process) {
    try {
      return process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      return false;
    }
  }

  private static boolean gone(ProcessHandle handle) {
    long end = System.nanoTime() + STOP_GRACE.toNanos();
    while (handle.isAlive()) {
      if (System.nanoTime() - end > 0) {
        return false;
      }
      LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        handle.destroyForcibly();
        return false;
      }
    }
    return true;
  }
}
