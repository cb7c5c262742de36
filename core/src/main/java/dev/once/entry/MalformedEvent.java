package dev.once.entry;

/** An event no delivery of which can ever be processed: acknowledged with a log line, never written down. */
public final class MalformedEvent extends Exception {
  private static final long serialVersionUID = 1L;

  public MalformedEvent(String reason) {
    super(reason);
  }
}
