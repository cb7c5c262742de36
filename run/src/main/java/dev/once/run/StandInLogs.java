package dev.once.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.local.http.Receiver;
import dev.once.local.stack.Part;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Log files for the parts that run inside dev/run's JVM, as the processes have theirs: each stand-in's
 * {@code java.util.logging} records go to its own file (one line each, {@code WARNING: message}, as the log follower
 * reads them) instead of the console, and the notification endpoint writes {@code NOTIFIED <status>
 * <Idempotency-Key> <result status>} per notification.
 */
final class StandInLogs implements AutoCloseable {
  private static final Map<Part, String> PACKAGES = Map.of(Part.STORAGE, "dev.once.local.storage",
      Part.GEMINI, "dev.once.local.gemini", Part.RELAY, "dev.once.local.eventarc");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Map<Part, Path> files = new EnumMap<>(Part.class);
  private final Map<Part, Writer> writers = new EnumMap<>(Part.class);
  /** Held here: JUL keeps loggers only weakly, and a collected logger forgets its handler. */
  private final List<Logger> loggers = new ArrayList<>();

  private StandInLogs(Path logDir) {
    for (Part part : List.of(Part.STORAGE, Part.GEMINI, Part.RELAY, Part.NOTIFY)) {
      Path file = logDir.resolve(part.fileName() + ".log");
      try {
        writers.put(part, Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND));
      } catch (IOException e) {
        throw new UncheckedIOException("could not open " + file, e);
      }
      files.put(part, file);
    }
  }

  static StandInLogs open(Path logDir) {
    StandInLogs logs = new StandInLogs(logDir);
    PACKAGES.forEach((part, name) -> {
      Logger logger = Logger.getLogger(name);
      logger.setUseParentHandlers(false);
      logger.addHandler(logs.new LineHandler(part));
      logs.loggers.add(logger);
    });
    return logs;
  }

  /** Writes one line per notification {@code endpoint} receives. */
  void follow(Receiver endpoint) {
    endpoint.onReceived(r -> write(Part.NOTIFY, "NOTIFIED " + r.status() + " " + r.header("Idempotency-Key") + " "
        + resultStatus(r.body())));
  }

  private static String resultStatus(byte[] body) {
    try {
      JsonNode status = JSON.readTree(body).path("result").path("status");
      return status.isMissingNode() ? null : status.asText();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  Map<Part, Path> files() {
    return files;
  }

  private void write(Part part, String text) {
    Writer writer = writers.get(part);
    synchronized (writer) {
      try {
        writer.write(text + System.lineSeparator());
        writer.flush();
      } catch (IOException e) {
        // the part goes on; only its log line is lost
      }
    }
  }

  @Override
  public void close() {
    loggers.forEach(logger -> logger.setUseParentHandlers(true));
    for (Writer writer : writers.values()) {
      synchronized (writer) {
        try {
          writer.close();
        } catch (IOException e) {
          // stopping
        }
      }
    }
  }

  /** {@code LEVEL: message}, then the exception's trace on the following lines. */
  private final class LineHandler extends Handler {
    private final Part part;
    private final SimpleFormatter messages = new SimpleFormatter();

    LineHandler(Part part) {
      this.part = part;
    }

    @Override
    public void publish(LogRecord record) {
      if (!isLoggable(record)) {
        return;
      }
      StringWriter line = new StringWriter().append(record.getLevel().getName()).append(": ")
          .append(messages.formatMessage(record));
      if (record.getThrown() != null) {
        line.append(System.lineSeparator());
        record.getThrown().printStackTrace(new PrintWriter(line));
      }
      write(part, line.toString().stripTrailing());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
