package dev.once.entry;

import dev.once.guard.Attempt;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Policy;
import dev.once.internal.entry.InvokerLog;
import dev.once.internal.entry.Redeliver;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.observe.Trace;
import io.cloudevents.CloudEvent;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The body of every CloudEvent function: parse → key → run → one log line → acknowledge or redeliver. A malformed
 * event, or one no key can be made of, is logged and acknowledged without a ledger write (retrying cannot help); an
 * event another delivery holds, or a transient failure, is thrown, so the platform delivers it again (the invoker
 * answers a throw with a 500; of one another delivery holds it logs nothing more: {@link InvokerLog}).
 *
 * <pre>{@code
 * private final EventEntry<PubSubMessage> entry = EventEntry.of("SendWelcome", PubSubMessage::from,
 *     message -> IdempotencyKey.of("welcome", message.attributes().get("userId")),
 *     EventEntry.effect(once, "email", Policy.atMostOnce(),
 *         (message, attempt) -> mailer.send(attempt, "application/json", message.data())));
 * public void accept(CloudEvent event) { entry.accept(event); }
 * }</pre>
 *
 * <p>The function's name names its log lines; an event may run several effects ({@link Report#then}), or one
 * ({@link #effect}).
 */
public final class EventEntry<T> {
  static {
    // An event thrown back for redelivery is logged once, as this entry's in_flight line: not as the invoker's error.
    InvokerLog.quietRedeliveries();
  }

  /** Reads what the event carries, or says why it never can be processed. */
  @FunctionalInterface
  public interface Parser<T> {
    T parse(CloudEvent event) throws MalformedEvent;
  }

  /** The idempotency key of what the event carries; throws {@link InvalidKey} when there is none. */
  @FunctionalInterface
  public interface KeyOf<T> {
    IdempotencyKey key(T input);
  }

  /** Runs the event's effects (through {@code Once}) and reports what came of them. */
  @FunctionalInterface
  public interface Handler<T> {
    Report handle(T input, IdempotencyKey key);
  }

  /** The one effect of an event, given what the event carries: {@link Once.Effect} with the input. */
  @FunctionalInterface
  public interface Effect<T> {
    Completion perform(T input, Attempt attempt) throws Exception;
  }

  private final String function;
  private final Parser<T> parser;
  private final KeyOf<T> keyOf;
  private final Handler<T> handler;
  private final BiFunction<T, CloudEvent, Optional<Trace>> tracer;
  private final Log log;

  private EventEntry(String function, Parser<T> parser, KeyOf<T> keyOf, Handler<T> handler,
      BiFunction<T, CloudEvent, Optional<Trace>> tracer, Log log) {
    this.function = function;
    this.parser = parser;
    this.keyOf = keyOf;
    this.handler = handler;
    this.tracer = tracer;
    this.log = log;
  }

  /** @param function the function's name, in its log lines: {@code [A-Za-z][A-Za-z0-9_-]{0,62}}, Cloud Functions' rule */
  public static <T> EventEntry<T> of(String function, Parser<T> parser, KeyOf<T> keyOf, Handler<T> handler) {
    return new EventEntry<>(IdempotentHttp.functionName(function), parser, keyOf, handler,
        (input, event) -> traceOf(event), Log.stdout());
  }

  /**
   * The handler of an event that runs one effect, {@code effect}, through {@code once} under {@code policy}: the
   * event's report is that effect's outcome.
   */
  public static <T> Handler<T> effect(Once once, String effect, Policy policy, Effect<T> work) {
    return (input, key) -> Report.of(key, effect,
        once.run(key, effect, policy, attempt -> work.perform(input, attempt)));
  }

  /** The same entry, taking each event's trace from what it carries (a message attribute, say) before the event's. */
  public EventEntry<T> tracedBy(BiFunction<T, CloudEvent, Optional<Trace>> carried) {
    return new EventEntry<>(function, parser, keyOf, handler,
        (input, event) -> carried.apply(input, event).or(() -> traceOf(event)), log);
  }

  /** The same entry, writing its event lines to {@code sink} instead of stdout. */
  public EventEntry<T> loggingTo(Log sink) {
    return new EventEntry<>(function, parser, keyOf, handler, tracer, sink);
  }

  public void accept(CloudEvent event) {
    long started = System.nanoTime();
    String eventId = String.valueOf(event.getId());
    T input;
    try {
      input = parser.parse(event);
    } catch (MalformedEvent e) {
      EventLog.refused(log, function, e.getMessage(), started, "eventId", eventId);
      return;
    }
    Trace.within(tracer.apply(input, event), () -> {
      run(input, eventId, started);
      return null;
    });
  }

  private void run(T input, String eventId, long started) {
    IdempotencyKey key = null;
    Report report;
    try {
      key = keyOf.key(input);
      report = handler.handle(input, key);
    } catch (InvalidKey e) {
      EventLog.refused(log, function, e.getMessage(), started, "eventId", eventId);
      return;
    } catch (RuntimeException e) {
      EventLog.record(log, function, key == null ? null : key.value(), "none", OutcomeLabel.FAILED, 0,
          EventLog.elapsedMs(started), Map.of("error", String.valueOf(e), "eventId", eventId));
      throw e;
    }
    report.with("eventId", eventId).log(log, function, started);
    if (report.inFlight()) {
      throw new Redeliver(report.key() + " is being handled by another delivery; redeliver later");
    }
  }

  /** The W3C trace context Eventarc sets as the event's {@code traceparent} extension. */
  private static Optional<Trace> traceOf(CloudEvent event) {
    Object traceparent = event.getExtension(Trace.TRACEPARENT);
    return traceparent == null ? Optional.empty() : Trace.fromTraceparent(traceparent.toString());
  }
}
