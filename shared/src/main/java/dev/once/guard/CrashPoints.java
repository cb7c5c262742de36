package dev.once.guard;

import dev.once.key.IdempotencyKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Pattern;

/**
 * Failure points for the crash and fault tests: when the JVM was started with {@code -Donce.crash.at=<point>}, the
 * process kills itself with SIGKILL the first time a matching key reaches that point, as a machine that dies
 * mid-event would. Inert otherwise: these are JVM system properties that only the tests pass, never environment
 * settings, so no deployment can switch them on. (A commit whose answer is lost is made on the wire, by a proxy in
 * front of Firestore, not here.)
 *
 * <p>{@code once.crash.keys} (a regex, default: every key) narrows which keys crash; {@code once.crash.log} is a
 * file listing the keys that crashed already, one per line, so the replacement process (started with the same flags)
 * lets the redelivered event through instead of failing on it forever.
 */
final class CrashPoints {
  private static final String POINT = System.getProperty("once.crash.at");
  private static final Pattern KEYS = Pattern.compile(System.getProperty("once.crash.keys", ".*"));
  private static final String LOG = System.getProperty("once.crash.log");

  private CrashPoints() {}

  /** The points {@link Once} passes: {@code after-claim:E}, {@code before-complete:E}, {@code after-complete:E}. */
  static void reached(String point, String effect, IdempotencyKey key) {
    if (POINT == null || !POINT.equals(point + ":" + effect) || !KEYS.matcher(key.value()).matches()) {
      return;
    }
    synchronized (CrashPoints.class) {
      if (!firstTime(key.value())) {
        return;
      }
      try {
        new ProcessBuilder("kill", "-KILL", String.valueOf(ProcessHandle.current().pid())).inheritIO().start()
            .waitFor();
      } catch (IOException e) {
        // no kill command: halt is the same for the test, no finally block or shutdown hook runs
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Runtime.getRuntime().halt(137);
    }
  }

  /** Whether {@code entry} is new to the log; adds it. */
  private static boolean firstTime(String entry) {
    Path log = Path.of(LOG == null ? "crashes.log" : LOG);
    try {
      if (Files.exists(log) && Files.readAllLines(log, StandardCharsets.UTF_8).contains(entry)) {
        return false;
      }
      Files.writeString(log, entry + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND, StandardOpenOption.SYNC);
      return true;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("could not keep the crash log " + log, e);
    }
  }
}
