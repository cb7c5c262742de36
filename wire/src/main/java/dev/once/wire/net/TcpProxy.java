package dev.once.wire.net;

import dev.once.wire.http.Counters;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay between clients and a server on loopback that can fail the way networks fail:
 * <ul>
 *   <li>{@link #cut()}: an outage as clients see it. Every open connection is reset and new ones are dropped on
 *       arrival until {@link #restore()}; the server behind keeps running (or is restarted by the test) and keeps
 *       its data.</li>
 *   <li>{@link #dropAnswersOfNext(int)} / {@link #dropAnswersFor(Duration)}: the client's request reaches the server
 *       and is carried out (a Pub/Sub publish, a Firestore commit), but the server's answer is dropped and the
 *       connection reset, so the client sees a failure for work that was done. For HTTP/2 (gRPC, which the Google
 *       clients speak to the emulators) connection-level frames still pass, so the connection comes up; the first
 *       complete answer on a stream is what triggers the reset. For HTTP/1.x the first byte of the answer does.</li>
 *   <li>{@link #dropAnswerOnceToRequestHolding(String...)}: the same for one HTTP/2 request picked by what its body
 *       holds (a Firestore commit naming a document and a value), so a test can lose the answer of one write among
 *       a function's many calls: the request is relayed and carried out, and at the end of its answer the connection
 *       is reset instead. gRPC bodies are protobuf, in which strings stand as their UTF-8 bytes.</li>
 *   <li>{@link #resetConnectionFrom(InetSocketAddress)}: resets one client's connection on the server's request;
 *       how {@code LocalServer} lets a stand-in answer with a TCP RST.</li>
 * </ul>
 * Counters: {@code connections} (relayed), {@code refused} (dropped while cut), {@code answersDropped} (connections
 * reset after the server answered a request on them: at least one request carried out, its answer lost),
 * {@code picked} (requests picked by {@link #dropAnswerOnceToRequestHolding}: each loses its answer, at its own end
 * or with its connection when another's answer ended first), {@code resets} (connections reset on the server's
 * request).
 */
public final class TcpProxy implements AutoCloseable {
  private static final byte[] HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int HTTP2_DATA = 0x0;
  private static final int HTTP2_HEADERS = 0x1;
  private static final int HTTP2_RST_STREAM = 0x3;
  private static final int HTTP2_END_STREAM = 0x1;

  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  /** Open relays by the local port of their connection to the server (which the server sees as the peer). */
  private final Map<Integer, Link> open = new ConcurrentHashMap<>();
  private final Counters counters = new Counters();
  private final AtomicInteger dropNextConnections = new AtomicInteger();
  private volatile long dropUntilNanos = System.nanoTime();
  private volatile boolean cut;
  private volatile boolean closed;
  /** Requests whose answer is to be lost, each once: all of its byte strings in one request's body. */
  private final List<List<byte[]>> targets = new CopyOnWriteArrayList<>();

  /**
   * One relayed connection. {@code http2} tells whether the client opened with the HTTP/2 preface; {@code
   * protocolKnown} opens once that is decided (or the client is gone).
   */
  private static final class Link {
    final Socket client;
    final Socket upstream;
    final int serverSidePort;
    final boolean dropAnswers;
    final CountDownLatch protocolKnown = new CountDownLatch(1);
    volatile boolean http2;
    /** HTTP/2 streams whose answer this link loses: requests that matched a target. */
    final Set<Integer> doomed = ConcurrentHashMap.newKeySet();

    Link(Socket client, Socket upstream, boolean dropAnswers) {
      this.client = client;
      this.upstream = upstream;
      this.serverSidePort = upstream.getLocalPort();
      this.dropAnswers = dropAnswers;
    }
  }

  private TcpProxy(ServerSocket server, String targetHost, int targetPort) {
    this.server = server;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
  }

  /** Listens on a free loopback port and relays to {@code target} ({@code host:port}). */
  public static TcpProxy start(String target) {
    return start(0, target);
  }

  /** Listens on loopback {@code port} (0 = a free one) and relays to {@code target} ({@code host:port}). */
  public static TcpProxy start(int port, String target) {
    int colon = target.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("a proxy target is host:port, not " + target);
    }
    try {
      ServerSocket server = new ServerSocket();
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      TcpProxy proxy = new TcpProxy(server, target.substring(0, colon), Integer.parseInt(target.substring(colon + 1)));
      Thread.ofPlatform().daemon().name("tcp-proxy-" + server.getLocalPort()).start(proxy::acceptLoop);
      return proxy;
    } catch (IOException e) {
      throw new UncheckedIOException("could not listen on 127.0.0.1:" + port + " for a proxy to " + target, e);
    }
  }

  public String hostPort() {
    return "127.0.0.1:" + port();
  }

  public int port() {
    return server.getLocalPort();
  }

  public Counters counters() {
    return counters;
  }

  /** Resets every open connection and drops new ones until {@link #restore()}. */
  public void cut() {
    cut = true;
    open.values().forEach(this::reset);
  }

  public void restore() {
    cut = false;
  }

  /** The next {@code count} new connections carry their first request out and lose its answer (then reset). */
  public void dropAnswersOfNext(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count must be >= 0, got " + count);
    }
    dropNextConnections.set(count);
  }

  /** For {@code window}, every connection, new or open, loses the answer to its next request (then reset). */
  public void dropAnswersFor(Duration window) {
    dropUntilNanos = System.nanoTime() + window.toNanos();
  }

  /**
   * The next HTTP/2 request whose body holds every one of {@code parts} (as UTF-8) is carried out and loses its
   * answer: where the answer ends, the connection is reset. Once; arm it again for another request.
   */
  public void dropAnswerOnceToRequestHolding(String... parts) {
    targets.add(Arrays.stream(parts).map(part -> part.getBytes(StandardCharsets.UTF_8)).toList());
  }

  /** Disarms {@link #dropAnswersOfNext}, {@link #dropAnswersFor} and {@link #dropAnswerOnceToRequestHolding}. */
  public void stopDroppingAnswers() {
    dropNextConnections.set(0);
    dropUntilNanos = System.nanoTime();
    targets.clear();
  }

  /**
   * Resets the client connection relayed through the server-side connection the server sees as {@code peer} (its
   * remote address). Returns false if there is none (already closed).
   */
  public boolean resetConnectionFrom(InetSocketAddress peer) {
    Link link = open.get(peer.getPort());
    if (link == null) {
      return false;
    }
    counters.increment("resets");
    reset(link);
    return true;
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
        counters.increment("refused");
        reset(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 2_000);
        Link link = new Link(client, upstream, takeArmedConnection());
        open.put(link.serverSidePort, link);
        counters.increment("connections");
        Thread.ofVirtual().start(() -> pumpRequests(link));
        Thread.ofVirtual().start(() -> pumpAnswers(link));
      } catch (IOException e) {
        reset(client); // the server is down: the client sees a reset, as it would
      }
    }
  }

  private boolean takeArmedConnection() {
    while (true) {
      int left = dropNextConnections.get();
      if (left <= 0) {
        return false;
      }
      if (dropNextConnections.compareAndSet(left, left - 1)) {
        return true;
      }
    }
  }

  private boolean dropping(Link link) {
    return link.dropAnswers || System.nanoTime() - dropUntilNanos < 0;
  }

  /**
   * Client to server, unchanged; decides from the client's first bytes whether it speaks HTTP/2, and then reads its
   * frames as they pass, for requests to lose the answer of.
   */
  private void pumpRequests(Link link) {
    byte[] buffer = new byte[16 * 1024];
    int matched = 0; // bytes of the HTTP/2 preface seen so far; -1 once the client said something else
    RequestFrames frames = new RequestFrames(link);
    try (InputStream in = link.client.getInputStream(); OutputStream out = link.upstream.getOutputStream()) {
      int read;
      while ((read = in.read(buffer)) >= 0) {
        int framesFrom = 0;
        for (int i = 0; i < read && matched >= 0 && matched < HTTP2_PREFACE.length; i++) {
          matched = buffer[i] == HTTP2_PREFACE[matched] ? matched + 1 : -1;
          framesFrom = i + 1;
        }
        if (matched < 0 || matched == HTTP2_PREFACE.length) {
          link.http2 = matched > 0;
          link.protocolKnown.countDown();
        }
        if (matched == HTTP2_PREFACE.length) {
          frames.feed(buffer, framesFrom, read - framesFrom);
        }
        out.write(buffer, 0, read);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed or was reset: close both
    } finally {
      link.protocolKnown.countDown();
      reset(link);
    }
  }

  /**
   * The client's HTTP/2 frames, reassembled from the bytes relayed: each stream's DATA is kept until a target's
   * byte strings are all in it (the stream is then doomed, the target spent) or the stream ends.
   */
  private final class RequestFrames {
    private final Link link;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    private final Map<Integer, ByteArrayOutputStream> bodies = new HashMap<>();

    RequestFrames(Link link) {
      this.link = link;
    }

    void feed(byte[] bytes, int from, int length) {
      pending.write(bytes, from, length);
      byte[] all = pending.toByteArray();
      int at = 0;
      while (all.length - at >= 9) {
        int size = ((all[at] & 0xff) << 16) | ((all[at + 1] & 0xff) << 8) | (all[at + 2] & 0xff);
        if (all.length - at < 9 + size) {
          break;
        }
        int type = all[at + 3] & 0xff;
        int flags = all[at + 4] & 0xff;
        int stream = ((all[at + 5] & 0x7f) << 24) | ((all[at + 6] & 0xff) << 16) | ((all[at + 7] & 0xff) << 8)
            | (all[at + 8] & 0xff);
        if (type == HTTP2_DATA && stream != 0 && (!targets.isEmpty() || bodies.containsKey(stream))) {
          bodies.computeIfAbsent(stream, s -> new ByteArrayOutputStream()).write(all, at + 9, size);
          match(stream, bodies.get(stream).toByteArray());
        }
        if ((type == HTTP2_DATA || type == HTTP2_HEADERS) && (flags & HTTP2_END_STREAM) != 0) {
          bodies.remove(stream);
        }
        at += 9 + size;
      }
      pending.reset();
      pending.write(all, at, all.length - at);
    }

    private void match(int stream, byte[] body) {
      for (List<byte[]> target : targets) {
        if (target.stream().allMatch(part -> indexOf(body, part) >= 0) && targets.remove(target)) {
          link.doomed.add(stream);
          counters.increment("picked");
          return;
        }
      }
    }
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Server to client: forwarded, unless this link is dropping answers. */
  private void pumpAnswers(Link link) {
    try (InputStream raw = link.upstream.getInputStream(); OutputStream out = link.client.getOutputStream()) {
      BufferedInputStream in = new BufferedInputStream(raw, 16 * 1024);
      in.mark(1);
      if (in.read() < 0) {
        return;
      }
      in.reset();
      // An HTTP/2 server may send its SETTINGS before it read the client's preface: wait for the client's first
      // bytes. A server that speaks first in a protocol where the client waits is relayed as plain bytes.
      if (awaitQuietly(link.protocolKnown, Duration.ofSeconds(2)) && link.http2) {
        pumpFrames(link, new DataInputStream(in), out);
      } else {
        pumpBytes(link, in, out);
      }
    } catch (IOException e) {
      // one side closed or was reset: close both
    } finally {
      reset(link);
    }
  }

  private void pumpBytes(Link link, InputStream in, OutputStream out) throws IOException {
    byte[] buffer = new byte[16 * 1024];
    int read;
    while ((read = in.read(buffer)) >= 0) {
      if (dropping(link)) {
        answerDropped(link); // an HTTP/1.x server only speaks to answer a request it read
        return;
      }
      out.write(buffer, 0, read);
      out.flush();
    }
  }

  /** HTTP/2 frame by frame (9-byte header, then the payload), so a stream's answer can be held back on its own. */
  private void pumpFrames(Link link, DataInputStream in, OutputStream out) throws IOException {
    byte[] header = new byte[9];
    while (true) {
      in.readFully(header);
      int length = ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
      int type = header[3] & 0xff;
      int flags = header[4] & 0xff;
      int stream = ((header[5] & 0x7f) << 24) | ((header[6] & 0xff) << 16) | ((header[7] & 0xff) << 8)
          | (header[8] & 0xff);
      byte[] payload = in.readNBytes(length);
      if (payload.length < length) {
        return;
      }
      if (stream != 0 && (dropping(link) || link.doomed.contains(stream))) {
        boolean ended = type == HTTP2_RST_STREAM
            || ((type == HTTP2_DATA || type == HTTP2_HEADERS) && (flags & HTTP2_END_STREAM) != 0);
        if (ended) {
          answerDropped(link); // the server finished answering a request it carried out
          return;
        }
        continue; // part of an answer the client must not see
      }
      out.write(header);
      out.write(payload);
      out.flush();
    }
  }

  private static boolean awaitQuietly(CountDownLatch latch, Duration timeout) {
    try {
      return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void answerDropped(Link link) {
    counters.increment("answersDropped");
    reset(link);
  }

  private void reset(Link link) {
    open.remove(link.serverSidePort, link);
    reset(link.client);
    reset(link.upstream);
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
    open.values().forEach(this::reset);
  }
}
