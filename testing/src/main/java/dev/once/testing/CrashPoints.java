package dev.once.testing;

import dev.once.guard.EffectListener;
import dev.once.key.IdempotencyKey;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Properties;
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
 *
 * <p>{@code -Donce.crash.plan=<file>} instead: a properties file with the same three names, read again at each point
 * reached, so a test moves a running process to its next crash point by rewriting the file (atomically) rather than
 * restarting it; no file, or no {@code once.crash.at} in it, is inert.
 */
public final class CrashPoints implements EffectListener {
  /** The properties that arm a crash point, as {@code -D} flags or in the plan file. */
  public static final String AT = "once.crash.at";
  public static final String KEYS = "once.crash.keys";
  public static final String LOG = "once.crash.log";
  /** The property naming a plan file. */
  public static final String PLAN_FILE = "once.crash.plan";
  private static final String PLAN = System.getProperty(PLAN_FILE);

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
    Properties armed = armed();
    String at = armed.getProperty(AT);
    if (at == null || !at.equals(point + ":" + effect)
        || !Pattern.matches(armed.getProperty(KEYS, ".*"), key.value())) {
      return;
    }
    synchronized (CrashPoints.class) {
      if (!firstTime(key.value(), armed.getProperty(LOG))) {
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

  /** The crash point armed now: the plan file's, or this JVM's flags. */
  private static Properties armed() {
    if (PLAN == null) {
      return System.getProperties();
    }
    Properties plan = new Properties();
    try (Reader reader = Files.newBufferedReader(Path.of(PLAN), StandardCharsets.UTF_8)) {
      plan.load(reader);
    } catch (NoSuchFileException e) {
      // not armed yet
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the crash plan " + PLAN, e);
    }
    return plan;
  }

  /** Whether {@code entry} is new to the log; adds it. */
  private static boolean firstTime(String entry, String logFile) {
    Path log = Path.of(logFile == null ? "crashes.log" : logFile);
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
