package dev.once.local.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP relay between clients and a server on loopback that can be cut: an outage as clients see it. While cut,
 * every open connection is reset and new ones are dropped on arrival; the server behind keeps running (or is
 * restarted by the test) and keeps its data.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;
  private volatile boolean closed;

  private TcpProxy(ServerSocket server, String targetHost, int targetPort) {
    this.server = server;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
  }

  /** Listens on a free loopback port and relays to {@code target} ({@code host:port}). */
  public static TcpProxy start(String target) {
    int colon = target.lastIndexOf(':');
    try {
      ServerSocket server = new ServerSocket();
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      TcpProxy proxy = new TcpProxy(server, target.substring(0, colon), Integer.parseInt(target.substring(colon + 1)));
      Thread.ofPlatform().daemon().name("tcp-proxy-" + server.getLocalPort()).start(proxy::acceptLoop);
      return proxy;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start a proxy to " + target, e);
    }
  }

  public String hostPort() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Resets every open connection and drops new ones until {@link #restore()}. */
  public void cut() {
    cut = true;
    open.forEach(TcpProxy::reset);
  }

  public void restore() {
    cut = false;
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (cut) {
        reset(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 2_000);
        open.add(client);
        open.add(upstream);
        Thread.ofVirtual().start(() -> pump(client, upstream));
        Thread.ofVirtual().start(() -> pump(upstream, client));
      } catch (IOException e) {
        reset(client); // the server is down: the client sees a reset, as it would
      }
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int read;
      while ((read = in.read(buffer)) >= 0) {
        out.write(buffer, 0, read);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed or was reset: close both
    } finally {
      reset(from);
      reset(to);
      open.remove(from);
      open.remove(to);
    }
  }

  private static void reset(Socket socket) {
    try {
      socket.setSoLinger(true, 0); // RST, not FIN: an abrupt failure
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    open.forEach(TcpProxy::reset);
  }
}
