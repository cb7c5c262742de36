package dev.once.local.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** The java binary a child JVM runs, and the flags of a small local JVM that starts quickly. */
public final class Jvm {
  /**
   * {@code WARNING: message} on one line (a trace follows on the next lines), instead of JUL's two-line default
   * with a date: dev/run's log follower reads these.
   */
  public static final String ONE_LINE_LOGS = "-Djava.util.logging.SimpleFormatter.format=%4$s: %5$s%6$s%n";

  private Jvm() {}

  /** This JVM's own java: the JDK the build and the scripts chose. */
  public static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * {@code extra}, then: C1 only and the serial collector (quick to start, small), English messages, one-line JUL
   * records, and no notices about libraries (SLF4J without a provider; on JDK 24+, protobuf's and Netty's use of
   * JDK internals, which JDK 21 neither prints nor knows the flags of).
   */
  public static List<String> quick(String... extra) {
    List<String> flags = new ArrayList<>(List.of(extra));
    flags.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss1m", "-Duser.language=en", ONE_LINE_LOGS,
        "-Dslf4j.internal.verbosity=ERROR"));
    if (Runtime.version().feature() >= 24) {
      flags.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED"));
    }
    return flags;
  }

  /**
   * Flags that keep the classes a JVM loaded in a dynamic CDS archive under {@code dir}, written when a JVM that found
   * none (or a stale one) exits, mapped by the next: a local function or emulator starts on about a third less CPU,
   * which a suite starting a hundred of them side by side on two cores needs. One archive per {@code name} and
   * {@code identity} (the rest of the command but its -D properties, and this JDK), since the JDK rebuilds one whose
   * class path or flags differ; a JVM killed before it exits writes nothing, and one finding a half-written file
   * (its header comes last) runs without it. The archive's messages are off: logs are read by tests and people.
   */
  public static List<String> classArchive(Path dir, String name, List<String> identity) {
    List<String> kept = new ArrayList<>(List.of(java()));
    identity.stream().filter(arg -> !arg.startsWith("-D")).forEach(kept::add);
    try {
      Files.createDirectories(dir);
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(String.join("\n", kept).getBytes(StandardCharsets.UTF_8));
      Path archive = dir.resolve(name + "-" + HexFormat.of().formatHex(digest, 0, 6) + ".jsa");
      return List.of("-XX:SharedArchiveFile=" + archive.toAbsolutePath(), "-XX:+AutoCreateSharedArchive",
          "-Xlog:cds*=off");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
