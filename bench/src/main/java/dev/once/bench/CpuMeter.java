package dev.once.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time (user + system) of named groups of processes, from /proc/PID/stat: where a run's work went. On a
 * machine whose cores are shared, CPU seconds are steadier than wall time, which also counts others' builds.
 */
final class CpuMeter {
  /** Linux reports utime and stime in clock ticks, 100 a second on every common kernel configuration. */
  private static final double TICKS_PER_SECOND = 100.0;

  private final Map<String, List<Long>> groups = new LinkedHashMap<>();

  CpuMeter add(String group, List<Long> pids) {
    groups.put(group, List.copyOf(pids));
    return this;
  }

  /** CPU seconds of each group so far. */
  Map<String, Double> read() {
    Map<String, Double> seconds = new LinkedHashMap<>();
    groups.forEach(
        (group, pids) -> seconds.put(group, pids.stream().mapToLong(CpuMeter::ticks).sum() / TICKS_PER_SECOND));
    return seconds;
  }

  static Map<String, Double> since(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> delta = new LinkedHashMap<>();
    after.forEach((group, s) -> delta.put(group, s - before.getOrDefault(group, 0.0)));
    return delta;
  }

  static String format(Map<String, Double> seconds) {
    StringBuilder text = new StringBuilder();
    double total = 0;
    for (Map.Entry<String, Double> entry : seconds.entrySet()) {
      text.append(String.format("%s %.1f s, ", entry.getKey(), entry.getValue()));
      total += entry.getValue();
    }
    return text.append(String.format("total %.1f s", total)).toString();
  }

  private static long ticks(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The command name (field 2) may hold blanks; fields after its closing parenthesis are fixed.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime (fields 14 and 15)
    } catch (IOException | RuntimeException e) {
      return 0; // a process that has exited (or a system without /proc) adds nothing
    }
  }
}
