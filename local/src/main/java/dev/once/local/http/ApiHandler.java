package dev.once.local.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.once.wire.http.HttpError;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Turns whatever a route throws into the service's own error answer, so garbage input can never crash a
 * stand-in or leak a stack trace; unexpected exceptions become a 500 and are logged.
 */
public abstract class ApiHandler implements HttpHandler {
  private static final Logger LOG = Logger.getLogger(ApiHandler.class.getName());

  private final long maxBody;

  protected ApiHandler(long maxBody) {
    this.maxBody = maxBody;
  }

  /** Answers the request; throw {@link HttpError} for a failure the service would report. */
  protected abstract void serve(Request request);

  /** Writes {@code error} in the service's error shape. */
  protected abstract void renderError(HttpExchange exchange, HttpError error);

  @Override
  public final void handle(HttpExchange exchange) {
    try {
      serve(Request.of(exchange, maxBody));
    } catch (HttpError e) {
      tryRender(exchange, e);
    } catch (RuntimeException | Error e) {
      LOG.log(Level.WARNING, "unexpected failure serving " + exchange.getRequestMethod() + " "
          + exchange.getRequestURI(), e);
      tryRender(exchange, new HttpError(500, "INTERNAL", "internalError", "Internal error encountered."));
    } finally {
      exchange.close();
    }
  }

  private void tryRender(HttpExchange exchange, HttpError error) {
    try {
      renderError(exchange, error);
    } catch (RuntimeException alreadyAnswered) {
      // The status line went out before the failure; closing the exchange is all that is left.
    }
  }
}
