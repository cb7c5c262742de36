package dev.once.wire.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.once.wire.net.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JDK HTTP server on the loopback interface, one virtual thread per request. Port 0 lets the kernel pick a
 * free port, so tests never race each other for one.
 *
 * <p>The JDK server cannot reset a connection (it only closes, with a FIN). A server started with
 * {@link #startResettable} listens behind a {@link TcpProxy} instead, so a handler can {@link #reset} its client's
 * connection with a TCP RST, as a crashed or overloaded front end does.
 */
public final class LocalServer implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor;
  private final TcpProxy front;

  private LocalServer(HttpServer server, TcpProxy front) {
    this.server = server;
    this.front = front;
    this.executor = Executors.newVirtualThreadPerTaskExecutor();
    server.setExecutor(executor);
    server.start();
  }

  public static LocalServer start(int port, HttpHandler handler) {
    return new LocalServer(listen(port, handler), null);
  }

  /** Listens on {@code port} through a relay that lets handlers {@link #reset} connections. */
  public static LocalServer startResettable(int port, HttpHandler handler) {
    HttpServer server = listen(0, handler);
    try {
      TcpProxy front = TcpProxy.start(port, "127.0.0.1:" + server.getAddress().getPort());
      return new LocalServer(server, front);
    } catch (RuntimeException e) {
      server.stop(0);
      throw e;
    }
  }

  private static HttpServer listen(int port, HttpHandler handler) {
    try {
      HttpServer server =
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
      server.createContext("/", handler);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException("could not listen on 127.0.0.1:" + port, e);
    }
  }

  public int port() {
    return front != null ? front.port() : server.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:PORT}, without a trailing slash. */
  public String baseUrl() {
    return "http://127.0.0.1:" + port();
  }

  /**
   * Resets the client connection of {@code exchange} (TCP RST, no HTTP answer); the exchange is closed too. Only a
   * server started with {@link #startResettable} can do it.
   */
  public void reset(HttpExchange exchange) {
    if (front == null) {
      throw new IllegalStateException("this server was not started resettable");
    }
    front.resetConnectionFrom(exchange.getRemoteAddress());
    exchange.close();
  }

  @Override
  public void close() {
    if (front != null) {
      front.close();
    }
    server.stop(0);
    executor.shutdownNow();
  }
}
