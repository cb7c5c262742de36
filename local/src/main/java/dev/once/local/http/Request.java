package dev.once.local.http;

import com.sun.net.httpserver.HttpExchange;
import dev.once.wire.http.HttpError;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * One incoming request with the checks every stand-in needs: a capped body (declared or actual size), gzip
 * request bodies (Google's HTTP client gzips uploads by default), and strict percent-decoding of the path.
 */
public final class Request {
  private final HttpExchange exchange;
  private final long maxBody;
  private final Map<String, List<String>> query;
  private byte[] body;

  private Request(HttpExchange exchange, long maxBody) {
    this.exchange = exchange;
    this.maxBody = maxBody;
    this.query = parseQuery(exchange.getRequestURI().getRawQuery());
  }

  public static Request of(HttpExchange exchange, long maxBody) {
    return new Request(exchange, maxBody);
  }

  public HttpExchange exchange() {
    return exchange;
  }

  public String method() {
    return exchange.getRequestMethod();
  }

  public String rawPath() {
    String path = exchange.getRequestURI().getRawPath();
    return path == null ? "/" : path;
  }

  /** Path segments, percent-decoded one by one (so an encoded '/' inside an object name stays in its segment). */
  public List<String> segments() {
    List<String> segments = new ArrayList<>();
    for (String raw : rawPath().split("/", -1)) {
      if (!raw.isEmpty()) {
        segments.add(decode(raw, false));
      }
    }
    return segments;
  }

  public Optional<String> query(String name) {
    List<String> values = query.get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }

  public Optional<Long> longQuery(String name) {
    Optional<String> value = query(name);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseLong(value.get()));
    } catch (NumberFormatException e) {
      throw HttpError.badRequest("invalid", "Invalid value for " + name + ": " + value.get());
    }
  }

  /** A query parameter that must be there: its absence is a 400 naming it. */
  public String required(String name) {
    return query(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }

  /** A whole-number query parameter that must be there. */
  public long requiredLong(String name) {
    return longQuery(name).orElseThrow(() -> HttpError.badRequest("required", "Missing query parameter " + name));
  }

  public String header(String name) {
    return exchange.getRequestHeaders().getFirst(name);
  }

  /** The body, read once; more than the cap (declared or actual) is an {@link HttpError} 413. */
  public byte[] body() {
    return body(maxBody);
  }

  /** The body under a tighter cap than the server-wide one (e.g. JSON calls next to large uploads). */
  public byte[] body(long cap) {
    if (body == null) {
      body = readBody(Math.min(cap, maxBody));
    }
    return body;
  }

  private byte[] readBody(long cap) {
    String declared = header("Content-Length");
    if (declared != null) {
      try {
        if (Long.parseLong(declared.trim()) > cap) {
          throw HttpError.tooLarge(cap);
        }
      } catch (NumberFormatException e) {
        throw HttpError.badRequest("invalid", "Invalid Content-Length");
      }
    }
    try {
      InputStream in = exchange.getRequestBody();
      String encoding = header("Content-Encoding");
      if (encoding != null && encoding.trim().equalsIgnoreCase("gzip")) {
        in = new GZIPInputStream(in);
      }
      return readCapped(in, cap);
    } catch (ZipException e) {
      throw HttpError.badRequest("invalid", "The gzip request body is corrupt");
    } catch (IOException e) {
      throw new UncheckedIOException("reading the request body failed", e);
    }
  }

  private static byte[] readCapped(InputStream in, long max) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[64 * 1024];
    long total = 0;
    int n;
    while ((n = in.read(buffer)) != -1) {
      total += n;
      if (total > max) {
        throw HttpError.tooLarge(max);
      }
      out.write(buffer, 0, n);
    }
    return out.toByteArray();
  }

  private static Map<String, List<String>> parseQuery(String raw) {
    Map<String, List<String>> result = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return result;
    }
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq), true);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), true);
      result.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return result;
  }

  /** Percent-decoding as UTF-8; '+' is a space only in query strings. Bad escapes are a 400, not a crash. */
  static String decode(String raw, boolean plusIsSpace) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        if (i + 2 >= raw.length()) {
          throw HttpError.badRequest("invalid", "Malformed percent-encoding in the request URL");
        }
        int hi = Character.digit(raw.charAt(i + 1), 16);
        int lo = Character.digit(raw.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          throw HttpError.badRequest("invalid", "Malformed percent-encoding in the request URL");
        }
        out.write(hi * 16 + lo);
        i += 2;
      } else if (c == '+' && plusIsSpace) {
        out.write(' ');
      } else {
        byte[] bytes = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        out.write(bytes, 0, bytes.length);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
