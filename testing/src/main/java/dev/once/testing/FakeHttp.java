package dev.once.testing;

import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An HTTP request and response as the Functions Framework invoker hands them to a function: headers in a
 * case-insensitive map, one value per header line (the invoker's {@code HttpUtil.toStringListMap}). For calling an
 * {@code HttpFunction} in a unit test: {@code function.service(FakeHttp.post("/orders", body).key("k-1"), response)}.
 */
public final class FakeHttp {
  private FakeHttp() {}

  public static Request post(String path, String body) {
    return post(path, body.getBytes(StandardCharsets.UTF_8));
  }

  public static Request post(String path, byte[] body) {
    return new Request("POST", path, null, body);
  }

  public static Request get(String path) {
    return new Request("GET", path, null, new byte[0]);
  }

  /** A request, then one response to answer it into. */
  public static final class Request implements HttpRequest {
    private final String method;
    private final String path;
    private final String query;
    private final byte[] body;
    private final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);

    public Request(String method, String path, String query, byte[] body) {
      this.method = method;
      this.path = path;
      this.query = query;
      this.body = body;
    }

    /** Adds one header line. */
    public Request header(String name, String value) {
      headers.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
      return this;
    }

    /** Adds an {@code Idempotency-Key} line. */
    public Request key(String key) {
      return header("Idempotency-Key", key);
    }

    @Override
    public String getMethod() {
      return method;
    }

    @Override
    public String getUri() {
      return "http://127.0.0.1:8080" + path + (query == null ? "" : "?" + query);
    }

    @Override
    public String getPath() {
      return path;
    }

    @Override
    public Optional<String> getQuery() {
      return Optional.ofNullable(query);
    }

    @Override
    public Map<String, List<String>> getQueryParameters() {
      return Map.of();
    }

    @Override
    public Map<String, HttpPart> getParts() {
      return Map.of();
    }

    @Override
    public Optional<String> getContentType() {
      return getFirstHeader("Content-Type");
    }

    @Override
    public long getContentLength() {
      return body.length;
    }

    @Override
    public Optional<String> getCharacterEncoding() {
      return Optional.empty();
    }

    @Override
    public InputStream getInputStream() {
      return new ByteArrayInputStream(body);
    }

    @Override
    public BufferedReader getReader() {
      return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }

    @Override
    public Map<String, List<String>> getHeaders() {
      return headers;
    }
  }

  /** What the function answered: its status, headers and body. */
  public static final class Response implements HttpResponse {
    private final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private int status = 200;
    private String contentType;

    public int status() {
      return status;
    }

    /** The header's values, comma-joined, or null. */
    public String header(String name) {
      List<String> values = headers.get(name);
      return values == null ? null : String.join(",", values);
    }

    public byte[] body() {
      return body.toByteArray();
    }

    public String text() {
      return body.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void setStatusCode(int code) {
      status = code;
    }

    @Override
    public void setStatusCode(int code, String message) {
      status = code;
    }

    @Override
    public void setContentType(String type) {
      contentType = type;
    }

    @Override
    public Optional<String> getContentType() {
      return Optional.ofNullable(contentType);
    }

    @Override
    public void appendHeader(String name, String value) {
      headers.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }

    @Override
    public Map<String, List<String>> getHeaders() {
      return headers;
    }

    @Override
    public OutputStream getOutputStream() {
      return body;
    }

    @Override
    public BufferedWriter getWriter() {
      return new BufferedWriter(new OutputStreamWriter(body, StandardCharsets.UTF_8));
    }
  }
}
