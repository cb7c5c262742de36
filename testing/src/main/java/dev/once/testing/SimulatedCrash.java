package dev.once.testing;

/**
 * The process dying, in process: thrown (an {@link Error}, which neither the guard nor its entry adapters handle)
 * where a crash would stop everything, so nothing the dying delivery would have written is written.
 */
public final class SimulatedCrash extends Error {
  private static final long serialVersionUID = 1L;

  SimulatedCrash(String where) {
    super("simulated crash: " + where, null, false, false);
  }
}
