package dev.once.observe;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The trace an event belongs to, so Cloud Logging joins the lines of one document across functions: read from a
 * CloudEvent's {@code traceparent} extension, an HTTP request's {@code traceparent} or {@code X-Cloud-Trace-Context}
 * header, or a published message's {@code traceparent} attribute; written by {@link Log} as
 * {@code logging.googleapis.com/trace} and {@code spanId}, and carried on by publishers.
 */
public record Trace(String traceId, String spanId) {
  /** The attribute and header name of the W3C trace context. */
  public static final String TRACEPARENT = "traceparent";

  private static final Pattern W3C = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}");
  private static final Pattern CLOUD = Pattern.compile("([0-9a-fA-F]{32})(?:/(\\d{1,20}))?(?:;o=\\d)?");
  private static final ThreadLocal<Trace> CURRENT = new ThreadLocal<>();

  /** From a W3C {@code traceparent} value; empty when absent or malformed (or all zeros, which W3C forbids). */
  public static Optional<Trace> fromTraceparent(String value) {
    if (value == null) {
      return Optional.empty();
    }
    Matcher m = W3C.matcher(value.strip());
    if (!m.matches() || m.group(1).chars().allMatch(c -> c == '0') || m.group(2).chars().allMatch(c -> c == '0')) {
      return Optional.empty();
    }
    return Optional.of(new Trace(m.group(1), m.group(2)));
  }

  /** From Google's {@code X-Cloud-Trace-Context: TRACE_ID/SPAN_ID;o=1} (the span id in decimal). */
  public static Optional<Trace> fromCloudTraceContext(String value) {
    if (value == null) {
      return Optional.empty();
    }
    Matcher m = CLOUD.matcher(value.strip());
    if (!m.matches()) {
      return Optional.empty();
    }
    String span;
    try {
      span = m.group(2) == null ? "0000000000000001" : String.format("%016x", Long.parseUnsignedLong(m.group(2)));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    return Optional.of(new Trace(m.group(1).toLowerCase(Locale.ROOT), span));
  }

  /** The W3C header value that carries this trace on (sampled). */
  public String traceparent() {
    return "00-" + traceId + "-" + spanId + "-01";
  }

  /** Work that may throw. */
  @FunctionalInterface
  public interface Work<T, E extends Exception> {
    T run() throws E;
  }

  /** Runs {@code work} with {@code trace} (if any) as the current trace of this thread's log lines. */
  public static <T, E extends Exception> T within(Optional<Trace> trace, Work<T, E> work) throws E {
    Trace previous = CURRENT.get();
    trace.ifPresentOrElse(CURRENT::set, CURRENT::remove);
    try {
      return work.run();
    } finally {
      if (previous == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(previous);
      }
    }
  }

  /** The trace of the event this thread is handling, if it came with one. */
  public static Optional<Trace> current() {
    return Optional.ofNullable(CURRENT.get());
  }
}
