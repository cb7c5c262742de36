package dev.once.cli;

import dev.once.cli.main.OnceCommand;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;

/** Runs {@code once} in this JVM, as its main would, and captures what it prints and its exit code. */
public final class OnceRunner {
  public record Result(int status, String out, String err) {
    /** For assertion messages: everything it said. */
    public String all() {
      return "exit " + status + "\n--- out\n" + out + "--- err\n" + err;
    }

    /** What it said on standard error beside a change's notice (what, where, as whom: Change). */
    public long errLinesBesideTheNotice() {
      return err.strip().lines().filter(line -> !line.startsWith("once: about to ") && !line.startsWith("  in ")
          && !line.startsWith("  as ")).count();
    }
  }

  private OnceRunner() {}

  public static Result run(Map<String, String> env, String... args) {
    return runAnswering(env, null, args);
  }

  /** As {@link #run}, with {@code input} (null: none) on the standard input, where a change asks for its "yes". */
  public static Result runAnswering(Map<String, String> env, String input, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Map<String, String> withoutLock = new HashMap<>(env);
    // A developer's own dev/run must not be what a test reads: point the lock lookup at nothing unless told.
    withoutLock.putIfAbsent(Context.RUN_DIR, "target/no-dev-run-here");
    BufferedReader in = input == null ? null : new BufferedReader(new StringReader(input));
    int status = OnceCommand.execute(withoutLock, in, new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Result(status, out.toString(), err.toString());
  }
}
