package dev.once.local;

import java.time.Duration;

/**
 * The suite's bounds for a loaded two-core machine: at a load of 30 every runnable thread gets about a fifteenth of a
 * core, so what takes a second alone can take fifteen. They are hang guards, never estimates of the work: an
 * {@link Await} returns as soon as its condition holds, so a generous bound costs nothing on a green run, and a bound
 * near the work is a test that fails because the machine was busy. docs/DESIGN.md, "How the suite runs side by side".
 */
public final class Bounds {
  /** A process until it is ready: an invoker listening, an emulator answering, a Maven run. Its exit ends it early. */
  public static final Duration START = Duration.ofMinutes(10);
  /** One call a test makes to read or drive what it tests (a Firestore read, an HTTP request) when nothing is wrong. */
  public static final Duration CALL = Duration.ofMinutes(2);
  /** Something on its way through a stack: a document, a job, a recovery after a kill, a cell of a matrix settling. */
  public static final Duration PATIENT = Duration.ofMinutes(5);

  private Bounds() {}
}
