package dev.once.internal.entry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The invoker's report of a throw (BackgroundFunctionExecutor.handle: {@code logger.log(Level.SEVERE, "Failed to
 * execute " + functionName, t)} on {@value InvokerLog#LOGGER}), made here as the invoker makes it: dropped for a
 * Redeliver, kept for anything else. {@code RedeliveryLogIT} shows it under the real invoker.
 */
class InvokerLogTest {
  private final Logger invoker = Logger.getLogger(InvokerLog.LOGGER);
  private final List<LogRecord> published = new ArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord record) {
      published.add(record); // what the logger's filter let through
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  @BeforeEach
  void listen() {
    invoker.addHandler(handler);
    invoker.setUseParentHandlers(false);
  }

  @AfterEach
  void stop() {
    invoker.removeHandler(handler);
    invoker.setUseParentHandlers(true);
  }

  @Test
  void aRedeliveryThrownBack_isNotReportedByTheInvoker_aFailureStillIs() {
    InvokerLog.quietRedeliveries();
    InvokerLog.quietRedeliveries(); // a second entry point in the process: one filter all the same

    invoker.log(Level.SEVERE, "Failed to execute dev.once.functions.BatchCompleted",
        new Redeliver("gemini:batches/1 is being handled by another delivery; redeliver later"));
    IllegalStateException failure = new IllegalStateException("Firestore unavailable");
    invoker.log(Level.SEVERE, "Failed to execute dev.once.functions.BatchCompleted", failure);

    assertEquals(1, published.size(), "only the failure is reported");
    assertEquals(failure, published.get(0).getThrown());
  }
}
