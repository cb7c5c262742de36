package dev.once.cli.stats;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.cli.Failure;
import dev.once.gemini.ModelUnavailable;
import dev.once.local.stack.Part;
import dev.once.observe.Log;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Outcomes per effect from the functions' own log lines, counted as the log-based metric counts them in a deployed
 * project (terraform/observability.tf: lines with the labels {@code outcome} and {@code function}, by {@code effect}
 * and {@code outcome}), here from the log files of the local {@code dev/run}. The lines carry no time of their own,
 * so these are the counts since that dev/run started.
 */
final class LogCounts {
  private static final ObjectMapper JSON = new ObjectMapper();

  private LogCounts() {}

  static Counts count(Path logDir) {
    Counts counts = new Counts(true);
    for (Part function : Part.functions()) {
      Path file = logDir.resolve(function.fileName() + ".log");
      try (BufferedReader lines = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          count(line, counts);
        }
      } catch (NoSuchFileException e) {
        // a function that never started has no log
      } catch (IOException e) {
        throw Failure.remote("could not read " + file + ": " + Failure.reason(e), e);
      }
    }
    return counts;
  }

  private static void count(String line, Counts counts) {
    if (!line.startsWith("{")) {
      return; // framework chatter and stack traces
    }
    try {
      JsonNode entry = JSON.readTree(line);
      JsonNode labels = entry.path(Log.LABELS);
      if (labels.hasNonNull("outcome") && labels.hasNonNull("function")) {
        counts.add(labels.path("effect").asText(), labels.get("outcome").asText(), 1);
        if (ModelUnavailable.says(entry.path("error").asText(null))) {
          counts.waitingForTheModel(1);
        }
      }
    } catch (IOException e) {
      // a line cut short as the function was stopped: not an event line
    }
  }
}
