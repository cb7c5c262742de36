package dev.once.run;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The java command every child JVM runs with: this JVM's java, small and quick to start, one-line JUL records. */
final class Jvm {
  /**
   * {@code WARNING: message} on one line (a trace follows on the next lines), instead of JUL's two-line default
   * with a date: the runner's log follower reads these.
   */
  static final String ONE_LINE_LOGS = "-Djava.util.logging.SimpleFormatter.format=%4$s: %5$s%6$s%n";

  private Jvm() {}

  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** Flags for a child JVM (without the java binary). */
  static List<String> flags(List<String> extra) {
    List<String> flags = new ArrayList<>(extra);
    flags.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss1m", "-Duser.language=en", ONE_LINE_LOGS,
        "-Dslf4j.internal.verbosity=ERROR"));
    if (Runtime.version().feature() >= 24) {
      // Notices about protobuf's and Netty's use of JDK internals; JDK 21 prints none and knows neither flag.
      flags.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED"));
    }
    return flags;
  }

  static List<String> command(List<String> extra) {
    List<String> command = new ArrayList<>();
    command.add(java());
    command.addAll(flags(extra));
    return command;
  }
}
