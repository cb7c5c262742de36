package dev.once.run;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One {@code dev/run} per log directory. The lock file holds the runner's pid: a second runner finds it alive and
 * says so, instead of failing on the first taken port; a lock whose pid is dead (a runner killed with SIGKILL) is
 * stale and taken over. Created with create-if-absent, so two runners starting at once cannot both win.
 */
public final class RunLock implements AutoCloseable {
  public static final String FILE = "run.lock";

  private final Path file;
  private final long pid;

  private RunLock(Path file, long pid) {
    this.file = file;
    this.pid = pid;
  }

  /** A live runner holds the lock. */
  public static final class AlreadyRunning extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final long pid;

    AlreadyRunning(long pid, Path file) {
      super("dev/run is already running here (pid " + pid + ", lock " + file + "); stop it with Ctrl-C in its"
          + " terminal or 'kill " + pid + "', or use dev/demo and dev/inspect against it");
      this.pid = pid;
    }

    public long pid() {
      return pid;
    }
  }

  public static Path file(Path logDir) {
    return logDir.resolve(FILE);
  }

  /**
   * Takes the lock for {@code info.pid()}. Returns the stale lock's children that are still alive (empty when there
   * was none), so the caller can name them if their ports turn out to be taken.
   */
  public static Acquired acquire(Path logDir, StackInfo info) {
    Path lock = file(logDir);
    try {
      Files.createDirectories(logDir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not create " + logDir, e);
    }
    List<Long> leftovers = List.of();
    for (int round = 0; round < 3; round++) {
      try {
        createWithContent(lock, info);
        return new Acquired(new RunLock(lock, info.pid()), leftovers);
      } catch (FileAlreadyExistsException e) {
        Optional<StackInfo> holder = StackInfo.read(lock);
        if (holder.isPresent() && holder.get().pid() != info.pid() && holder.get().alive()) {
          throw new AlreadyRunning(holder.get().pid(), lock);
        }
        leftovers = holder.map(h -> h.children().stream().filter(RunLock::alive).toList()).orElse(List.of());
        try {
          Files.deleteIfExists(lock); // stale: its runner is gone
        } catch (IOException ex) {
          throw new UncheckedIOException("could not remove the stale lock " + lock, ex);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not create the lock " + lock, e);
      }
    }
    throw new IllegalStateException("could not take the lock " + lock + ": another runner keeps taking it");
  }

  /**
   * The file appears with its content in one step (a hard link to a written temporary file fails if the lock
   * exists), so no other runner can read it empty and take it for stale.
   */
  private static void createWithContent(Path lock, StackInfo info) throws IOException {
    Path temp = lock.resolveSibling(FILE + "." + info.pid() + ".new");
    Files.deleteIfExists(temp);
    info.writeTo(temp);
    try {
      Files.createLink(lock, temp);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /** The lock, and the children of a dead runner that still live (they hold its ports). */
  public record Acquired(RunLock lock, List<Long> leftovers) {}

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** Records what runs, for dev/demo and dev/inspect. */
  public void update(StackInfo info) {
    if (Files.exists(file)) {
      info.writeTo(file);
    }
  }

  public Path file() {
    return file;
  }

  /** Removes the lock if it is still ours. */
  @Override
  public void close() {
    Optional<StackInfo> holder = StackInfo.read(file);
    if (holder.isEmpty() || holder.get().pid() == pid) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        // nothing left to do on the way out; the next runner treats the lock as stale
      }
    }
  }
}
