package dev.once.local.http;

/** A local server a test or the local runner starts and stops. */
public interface StandIn extends AutoCloseable {
  /** {@code http://127.0.0.1:PORT}, without a trailing slash. */
  String baseUrl();

  @Override
  void close();
}
