package dev.once.internal.entry;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Filter;
import java.util.logging.Logger;

/**
 * What the Functions Framework invoker logs of an event a function throws back on purpose. The invoker
 * (java-function-invoker 2.0.0, {@code BackgroundFunctionExecutor.handle}) answers every throw with a 500 — what
 * makes Eventarc and Pub/Sub push deliver the event again — and logs it at SEVERE with its stack trace on the logger
 * {@value #LOGGER}, which Cloud Logging records as an ERROR and Error Reporting counts. A {@link Redeliver} is no
 * error: another delivery holds the claim (DESIGN decision 4), and the function has logged the event's own line
 * ({@code in_flight}, INFO) already. So that logger drops the records of a Redeliver, and only those; the 500 stays.
 */
public final class InvokerLog {
  /** The logger the invoker reports a function's throw on. */
  public static final String LOGGER = "com.google.cloud.functions.invoker";
  /** Held, so the logger keeps its filter: the log manager holds its loggers weakly. */
  private static final Logger INVOKER = Logger.getLogger(LOGGER);
  private static final AtomicBoolean QUIET = new AtomicBoolean();

  private InvokerLog() {}

  /** Once per process: the invoker's logger no longer reports a {@link Redeliver} (a filter it had is kept). */
  public static void quietRedeliveries() {
    if (QUIET.compareAndSet(false, true)) {
      Filter before = INVOKER.getFilter();
      INVOKER.setFilter(record -> !(record.getThrown() instanceof Redeliver)
          && (before == null || before.isLoggable(record)));
    }
  }
}
