package dev.once.local.eventarc;

import dev.once.local.http.Request;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.http.HttpError;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The CloudEvents HTTP binary mode, as Eventarc POSTs to a function: attributes as {@code ce-*} headers
 * (percent-encoded where the HTTP binding requires it), data as the body.
 */
public final class BinaryMode {
  private static final Set<String> CORE = Set.of("id", "source", "type", "subject", "time", "specversion");

  private BinaryMode() {}

  /** The POST Eventarc makes of {@code event}: its attributes as percent-encoded {@code ce-} headers, its data the body. */
  public static HttpRequest request(CloudEvent event, URI target, Duration timeout) {
    HttpRequest.Builder request = HttpRequest.newBuilder(target)
        .timeout(timeout)
        .header("ce-specversion", "1.0")
        .header("ce-id", encode(event.id()))
        .header("ce-source", encode(event.source()))
        .header("ce-type", encode(event.type()))
        .header("Content-Type", event.dataContentType() == null ? "application/json" : event.dataContentType())
        .POST(HttpRequest.BodyPublishers.ofByteArray(event.data()));
    if (event.subject() != null) {
      request.header("ce-subject", encode(event.subject()));
    }
    if (event.time() != null) {
      request.header("ce-time", event.time().toString());
    }
    event.extensions().forEach((name, value) -> request.header("ce-" + name, encode(value)));
    return request.build();
  }

  /** Reads a binary-mode event (the relay's generic ingest); a missing required attribute is a 400. */
  static CloudEvent parse(Request request) {
    if (!"1.0".equals(request.header("ce-specversion"))) {
      throw HttpError.badRequest("invalid", "ce-specversion must be 1.0");
    }
    String id = required(request, "ce-id");
    String source = required(request, "ce-source");
    String type = required(request, "ce-type");
    String subject = request.header("ce-subject");
    Instant time = null;
    if (request.header("ce-time") != null) {
      try {
        time = Instant.parse(request.header("ce-time"));
      } catch (DateTimeParseException e) {
        throw HttpError.badRequest("invalid", "ce-time must be RFC 3339");
      }
    }
    Map<String, String> extensions = new LinkedHashMap<>();
    request.exchange().getRequestHeaders().forEach((name, values) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.startsWith("ce-") && !CORE.contains(lower.substring(3)) && !values.isEmpty()) {
        extensions.put(lower.substring(3), decode(values.get(0)));
      }
    });
    return new CloudEvent(id, source, type, subject == null ? null : decode(subject), time,
        request.header("Content-Type"), request.body(), extensions);
  }

  private static String required(Request request, String header) {
    String value = request.header(header);
    if (value == null || value.isBlank()) {
      throw HttpError.badRequest("required", header + " is required");
    }
    return decode(value);
  }

  /** Percent-encodes what the HTTP binding says must be: non-printable and non-ASCII bytes, '%' and '"'. */
  static String encode(String value) {
    StringBuilder out = new StringBuilder(value.length());
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c < 0x20 || c > 0x7e || c == '%' || c == '"') {
        out.append('%').append(String.format("%02X", c));
      } else {
        out.append((char) c);
      }
    }
    return out.toString();
  }

  static String decode(String value) {
    if (value.indexOf('%') < 0) {
      return value;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '%' && i + 2 < value.length()) {
        int hi = Character.digit(value.charAt(i + 1), 16);
        int lo = Character.digit(value.charAt(i + 2), 16);
        if (hi >= 0 && lo >= 0) {
          out.write(hi * 16 + lo);
          i += 2;
          continue;
        }
      }
      out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
