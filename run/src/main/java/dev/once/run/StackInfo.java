package dev.once.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.local.process.ChildProcess;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a running {@code dev/run} tells other commands on this machine ({@code dev/demo}, {@code dev/inspect}, a
 * second {@code dev/run}): its pid, mode, ports and log directory, and the pids of its children. Kept as JSON in
 * the lock file, {@code <log dir>/run.lock}.
 *
 * @param gemini {@code stand-in} or {@code real}
 */
public record StackInfo(long pid, String mode, String project, String collection, Map<Part, Integer> ports,
    String gemini, String logDir, String startedAt, List<Long> children) {

  private static final ObjectMapper JSON = new ObjectMapper();

  public static StackInfo of(RunConfig config, long pid, List<Long> children) {
    return new StackInfo(pid, config.mode().value(), config.project(), config.collection(), config.ports().byPart(),
        config.realGemini() ? "real" : "stand-in", config.logDir().toAbsolutePath().toString(),
        Instant.now().toString(), List.copyOf(children));
  }

  /** What a running stack tells: {@code config} in the mode it runs, the runner's pid and every process started. */
  public static StackInfo of(RunConfig config, long pid, LocalStack stack) {
    return of(config, pid, stack.processes().stream().map(ChildProcess::pid).toList());
  }

  public Ports portSet() {
    return new Ports(ports);
  }

  public Mode analysisMode() {
    return Mode.parse(mode);
  }

  public boolean standInGemini() {
    return "stand-in".equals(gemini);
  }

  public Path logs() {
    return Path.of(logDir);
  }

  public boolean alive() {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** The lock file of a log directory, parsed; empty when absent or unreadable (a crash mid-write). */
  public static Optional<StackInfo> read(Path lockFile) {
    try {
      return Optional.of(JSON.readValue(Files.readAllBytes(lockFile), StackInfo.class));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Replaces the file in one rename, so a reader never sees half of it. */
  void writeTo(Path lockFile) {
    try {
      Path temp = Files.createTempFile(lockFile.toAbsolutePath().getParent(), "run.lock.", ".tmp");
      Files.write(temp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(this));
      try {
        Files.move(temp, lockFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, lockFile, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not write " + lockFile, e);
    }
  }
}
