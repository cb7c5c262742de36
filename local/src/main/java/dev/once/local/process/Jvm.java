package dev.once.local.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The java binary a child JVM runs, and the flags of a small local JVM that starts quickly. */
public final class Jvm {
  /**
   * {@code WARNING: message} on one line (a trace follows on the next lines), instead of JUL's two-line default
   * with a date: dev/run's log follower reads these.
   */
  public static final String ONE_LINE_LOGS = "-Djava.util.logging.SimpleFormatter.format=%4$s: %5$s%6$s%n";

  /**
   * No bytecode verification of the class path's classes (javac's and Maven Central's jars, which the JDK's own
   * classes are not verified against either): a JVM of the suite loads thousands of gRPC, protobuf and Firestore
   * classes, and verifying them was about a tenth of its CPU (one IT class, every JVM: 27.4 → 24.6 CPU-s). A
   * diagnostic flag, so unlocked first. For local JVMs only: a deployed function is verified as Cloud Run starts it.
   */
  public static final List<String> NO_VERIFY =
      List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote");

  private Jvm() {}

  /** This JVM's own java: the JDK the build and the scripts chose. */
  public static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * {@code extra}, then: C1 only and the serial collector (quick to start, small), no verification
   * ({@link #NO_VERIFY}), English messages, one-line JUL
   * records, and no notices about libraries (SLF4J without a provider; on JDK 24+, protobuf's and Netty's use of
   * JDK internals, which JDK 21 neither prints nor knows the flags of).
   */
  public static List<String> quick(String... extra) {
    List<String> flags = new ArrayList<>(List.of(extra));
    flags.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss1m", "-Duser.language=en", ONE_LINE_LOGS,
        "-Dslf4j.internal.verbosity=ERROR"));
    flags.addAll(NO_VERIFY);
    if (Runtime.version().feature() >= 24) {
      flags.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED"));
    }
    return flags;
  }
}
