package dev.once.local.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/** Sends bytes no well-behaved client would (bad escapes, non-HTTP garbage) and reads whatever comes back. */
public final class RawHttp {
  private RawHttp() {}

  /** Returns the raw answer (status line, headers, body), or "" when the server just closed the connection. */
  public static String exchange(int port, String request) throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(5_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      socket.shutdownOutput();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      int n;
      try {
        while ((n = in.read(buffer)) != -1) {
          out.write(buffer, 0, n);
        }
      } catch (SocketException reset) {
        // a server may reset a connection carrying garbage; what was read so far is the answer
      }
      return out.toString(StandardCharsets.ISO_8859_1);
    }
  }

  public static String get(int port, String rawPathAndQuery) throws IOException {
    return exchange(port, "GET " + rawPathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  }

  public static int status(String answer) {
    if (!answer.startsWith("HTTP/1.1 ")) {
      return -1;
    }
    return Integer.parseInt(answer.substring(9, 12));
  }

  public static String body(String answer) {
    int at = answer.indexOf("\r\n\r\n");
    return at < 0 ? "" : answer.substring(at + 4);
  }
}
