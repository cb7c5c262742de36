package dev.once.run.inspect;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Runs {@code dev/inspect}'s main logic in this JVM and captures what it prints. */
public final class InspectRunner {
  public record Result(int status, String out, String err) {}

  private InspectRunner() {}

  public static Result run(Map<String, String> env, String key) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Inspect.run(new String[] {key}, env, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
