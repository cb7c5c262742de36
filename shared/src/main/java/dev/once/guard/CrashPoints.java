package dev.once.guard;

import com.google.api.gax.grpc.GrpcStatusCode;
import com.google.api.gax.rpc.InternalException;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerUnavailable;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Failure points for the crash and fault tests: when the JVM was started with {@code -Donce.crash.at=<point>}, the
 * process kills itself with SIGKILL the first time a matching key reaches that point, as a machine that dies
 * mid-event would; with {@code -Donce.fault.answer-lost=complete:<effect>}, a commit completing that effect is
 * applied and then fails as if its answer had been lost ({@link #answerLost}). Inert otherwise: these are JVM system
 * properties that only the tests pass, never environment settings, so no deployment can switch them on.
 *
 * <p>{@code once.crash.keys} (a regex, default: every key) narrows which keys crash; {@code once.crash.log} is a
 * file listing the keys that crashed (or lost an answer) already, one per line, so the replacement process (started
 * with the same flags) lets the redelivered event through instead of failing on it forever.
 */
final class CrashPoints {
  private static final String POINT = System.getProperty("once.crash.at");
  private static final Pattern KEYS = Pattern.compile(System.getProperty("once.crash.keys", ".*"));
  private static final String LOG = System.getProperty("once.crash.log");
  private static final List<String> ANSWER_LOST =
      List.of(System.getProperty("once.fault.answer-lost", "").split(","));

  /**
   * How a commit's answer is lost, and what the ledger's caller then sees when the ledger cannot tell either (it
   * checks for its own write after a failure, and that check failed too): the guard's last resort, its own read. A
   * reset is not here: the client resends the commit and the ledger recognises its own write, which tests make
   * happen on the wire (the proxy's {@code dropAnswerOnceToRequestHolding}) rather than at this point.
   */
  enum LostAnswer {
    /** It came after the ledger's bound on the call: the ledger gives up waiting. */
    LATE,
    /** A 5xx: INTERNAL, which the client does not retry. */
    SERVER_ERROR;

    /** {@code once.fault.answer-lost.late}, {@code .server-error}: the keys that lose it so. */
    final Pattern keys = keys("once.fault.answer-lost." + name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));

    RuntimeException failure(String effect, IdempotencyKey key) {
      String what = "the commit completing " + effect + " for " + key + " (injected: it was applied, its answer lost)";
      return switch (this) {
        case LATE -> new LedgerUnavailable("Firestore did not answer in time to " + what, null);
        case SERVER_ERROR -> new InternalException("INTERNAL: " + what, null, GrpcStatusCode.of(Status.Code.INTERNAL),
            false);
      };
    }
  }

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

  /**
   * Called right after the commit completing {@code effect} was applied ({@code point} is {@code complete}): throws
   * what the ledger throws when that commit's answer is lost, once per key, for the keys of a {@link LostAnswer}.
   */
  static void answerLost(String point, String effect, IdempotencyKey key) {
    if (!ANSWER_LOST.contains(point + ":" + effect)) {
      return;
    }
    for (LostAnswer how : LostAnswer.values()) {
      if (how.keys != null && how.keys.matcher(key.value()).matches()) {
        synchronized (CrashPoints.class) {
          if (firstTime("answer-lost " + point + ":" + effect + " " + key.value())) {
            throw how.failure(effect, key);
          }
        }
      }
    }
  }

  private static Pattern keys(String property) {
    String regex = System.getProperty(property);
    return regex == null ? null : Pattern.compile(regex);
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
