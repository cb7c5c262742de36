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

  private final Path logDir;
  private final Map<Part, Path> files = new EnumMap<>(Part.class);
  /** Held here: JUL keeps loggers only weakly, and a collected logger forgets its handler. */
  private final List<Logger> loggers = new ArrayList<>();
  private final List<Writer> writers = new ArrayList<>();
  private Writer notifications;

  private StandInLogs(Path logDir) {
    this.logDir = logDir;
  }

  static StandInLogs open(Path logDir) {
    StandInLogs logs = new StandInLogs(logDir);
    PACKAGES.forEach((part, name) -> {
      Writer writer = logs.writer(part);
      Logger logger = Logger.getLogger(name);
      logger.setUseParentHandlers(false);
      logger.addHandler(new LineHandler(writer));
      logs.loggers.add(logger);
    });
    logs.notifications = logs.writer(Part.NOTIFY);
    return logs;
  }

  /** Writes one line per notification {@code endpoint} receives. */
  void follow(Receiver endpoint) {
    endpoint.onReceived(r -> write(notifications, "NOTIFIED " + r.status() + " " + r.header("Idempotency-Key") + " "
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

  private Writer writer(Part part) {
    Path file = logDir.resolve(part.fileName() + ".log");
    files.put(part, file);
    try {
      Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
      writers.add(writer);
      return writer;
    } catch (IOException e) {
      throw new UncheckedIOException("could not open " + file, e);
    }
  }

  private static void write(Writer writer, String text) {
    synchronized (writer) {
      try {
        writer.write(text);
        writer.write(System.lineSeparator());
        writer.flush();
      } catch (IOException e) {
        // the part goes on; only its log line is lost
      }
    }
  }

  @Override
  public void close() {
    loggers.forEach(logger -> {
      for (Handler handler : logger.getHandlers()) {
        logger.removeHandler(handler);
      }
      logger.setUseParentHandlers(true);
    });
    for (Writer writer : writers) {
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
  private static final class LineHandler extends Handler {
    private final Writer writer;

    LineHandler(Writer writer) {
      this.writer = writer;
    }

    @Override
    public void publish(LogRecord record) {
      if (!isLoggable(record)) {
        return;
      }
      StringBuilder line = new StringBuilder(record.getLevel().getName()).append(": ")
          .append(new java.util.logging.SimpleFormatter().formatMessage(record));
      if (record.getThrown() != null) {
        StringWriter trace = new StringWriter();
        record.getThrown().printStackTrace(new PrintWriter(trace));
        line.append(System.lineSeparator()).append(trace.toString().stripTrailing());
      }
      write(writer, line.toString());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
