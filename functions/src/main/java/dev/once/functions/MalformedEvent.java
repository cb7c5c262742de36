package dev.once.functions;

/** An event no delivery of which can ever be processed: acknowledged with a log line, never written down. */
final class MalformedEvent extends Exception {
  private static final long serialVersionUID = 1L;

  MalformedEvent(String reason) {
    super(reason);
  }
}
