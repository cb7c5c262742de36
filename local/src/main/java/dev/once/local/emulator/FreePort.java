package dev.once.local.emulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A port that was free a moment ago on the loopback interface, that the kernel will not hand to anyone else, and that
 * no other JVM on this machine picked.
 *
 * <p>A picked port is bound later, often by another process: an emulator, a function's invoker (seconds to listen
 * under load), a killed function's replacement on the same port. Two things could take it meanwhile, and did (a
 * function failed to bind while a proxy's {@code bind(0)} held its port, and the stack took the proxy for it):
 * the kernel, which gives ports of its ephemeral range (Linux: 32768-60999) to every {@code bind(0)} and outgoing
 * connection on the machine; and another test JVM picking the same port (failsafe forks, other worktrees' builds).
 * So ports are picked below the ephemeral range, from {@link #LOW} to {@link #HIGH} (above the fixed ports of
 * {@code dev/run}: its defaults and the 20000s), and each pick is reserved machine-wide for the life of the JVM that
 * made it: a file lock on {@code <tmpdir>/once-ports/<port>}, which the operating system drops when the JVM exits,
 * however it exits.
 */
public final class FreePort {
  static final int LOW = 23_000;
  static final int HIGH = 32_768;
  static final Path RESERVATIONS = Path.of(System.getProperty("java.io.tmpdir"), "once-ports");
  private static final int TRIES = 100;
  /** This JVM's reservations, held until it exits. */
  private static final Map<Integer, FileLock> RESERVED = new HashMap<>();

  private FreePort() {}

  public static synchronized int pick() {
    for (int i = 0; i < TRIES; i++) {
      int port = ThreadLocalRandom.current().nextInt(LOW, HIGH);
      // Reserved first, then checked: bound by something that does not reserve (a program started by hand), it stays
      // reserved and unused.
      if (!RESERVED.containsKey(port) && reserve(port) && isFree(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free port between " + LOW + " and " + HIGH + " in " + TRIES + " tries");
  }

  /** True when this JVM now holds the port's lock; false when another JVM holds it. */
  private static boolean reserve(int port) {
    try {
      Files.createDirectories(RESERVATIONS);
      FileChannel channel = FileChannel.open(RESERVATIONS.resolve(String.valueOf(port)),
          StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
        return false;
      }
      RESERVED.put(port, lock);
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("could not reserve port " + port + " under " + RESERVATIONS, e);
    }
  }

  /** True when nothing listens on 127.0.0.1:port. */
  public static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
