package dev.once.local.http;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JDK HTTP server on the loopback interface, one virtual thread per request. Port 0 lets the kernel pick a
 * free port, so tests never race each other for one.
 */
public final class LocalServer implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor;

  private LocalServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  public static LocalServer start(int port, HttpHandler handler) {
    try {
      HttpServer server =
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
      ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
      server.setExecutor(executor);
      server.createContext("/", handler);
      server.start();
      return new LocalServer(server, executor);
    } catch (IOException e) {
      throw new UncheckedIOException("could not listen on 127.0.0.1:" + port, e);
    }
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:PORT}, without a trailing slash. */
  public String baseUrl() {
    return "http://127.0.0.1:" + port();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
