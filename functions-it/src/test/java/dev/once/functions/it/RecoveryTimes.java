package dev.once.functions.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How long a crashed document took, per kill point of a crash matrix: from the kill (the watchdog finding the process
 * dead) to what {@code finished} names. Printed by the matrix at its end as a table (kills, median, worst) and kept in
 * {@code target/it-logs/recovery-<matrix>.md}; BENCHMARKS.md and docs/OPERATIONS.md quote it.
 */
final class RecoveryTimes {
  private final String matrix;
  private final String settings;
  private final String finished;
  private final Map<String, List<Duration>> byPoint = new LinkedHashMap<>();

  /**
   * @param settings what the recovery waits on here (the lease, timeouts, how soon a redelivery or reconciler run
   *     comes), for the reader who scales it to a deployment's
   * @param finished what the time runs to
   */
  RecoveryTimes(String matrix, String settings, String finished) {
    this.matrix = matrix;
    this.settings = settings;
    this.finished = finished;
  }

  synchronized void record(String point, Duration recovery) {
    byPoint.computeIfAbsent(point, p -> new ArrayList<>()).add(recovery);
  }

  /** The table in markdown, one row per kill point in the order they ran. */
  synchronized String table() {
    List<String> rows = new ArrayList<>(List.of(
        "Recovery after a kill, " + matrix + " (" + settings + "): from the kill to " + finished + ".",
        "", "| kill point | kills | median | worst |", "|---|---|---|---|"));
    byPoint.forEach((point, times) -> {
      List<Duration> sorted = times.stream().sorted().toList();
      rows.add(String.format(Locale.ROOT, "| %s | %d | %s | %s |", point, sorted.size(), seconds(median(sorted)),
          seconds(sorted.get(sorted.size() - 1))));
    });
    return String.join("\n", rows);
  }

  /** Prints the table and writes it under the IT log directory. */
  void report(String fileName) {
    String table = table();
    Path file = Path.of(System.getProperty("once.logDir", "target/it-logs"), fileName);
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, table + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    System.out.println(table + "\n(" + file + ")");
  }

  private static Duration median(List<Duration> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : sorted.get(n / 2 - 1).plus(sorted.get(n / 2)).dividedBy(2);
  }

  private static String seconds(Duration duration) {
    return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
  }
}
