package dev.once.testing;

import dev.once.guard.EffectListener;
import dev.once.key.IdempotencyKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Pattern;

/**
 * Crash points for tests that run a function in a process of its own (under the real invoker, from its deploy jar):
 * an {@link EffectListener} this jar declares, so a function process with this jar before its own on the class path
 * kills itself with SIGKILL the first time a matching key reaches {@code -Donce.crash.at=<point>:<effect>}, as a
 * machine that dies mid-event would. The points: {@code after-claim} (claimed, the effect not run),
 * {@code before-complete} (the effect ran, its completion not committed), {@code after-complete}. Inert without that
 * property; the deploy jar holds none of this.
 *
 * <p>{@code once.crash.keys} (a regex, default: every key) narrows which keys crash; {@code once.crash.log} is a
 * file listing the keys that crashed already, one per line, so the replacement process (started with the same flags)
 * lets the redelivered event through instead of failing on it forever. (A commit whose answer is lost is made on the
 * wire, by a proxy in front of Firestore, not here.)
 */
public final class CrashPoints implements EffectListener {
  private static final String POINT = System.getProperty("once.crash.at");
  private static final Pattern KEYS = Pattern.compile(System.getProperty("once.crash.keys", ".*"));
  private static final String LOG = System.getProperty("once.crash.log");

  @Override
  public void claimed(IdempotencyKey key, String effect) {
    reached("after-claim", effect, key);
  }

  @Override
  public void completing(IdempotencyKey key, String effect) {
    reached("before-complete", effect, key);
  }

  @Override
  public void completed(IdempotencyKey key, String effect) {
    reached("after-complete", effect, key);
  }

  private static void reached(String point, String effect, IdempotencyKey key) {
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
      throw new UncheckedIOException("could not keep the crash log " + log, e);
    }
  }
}
