package dev.once.local.storage;

import dev.once.local.http.HttpError;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A {@code multipart/related} body (metadata part, then media part), split without copying the media twice. */
final class Multipart {
  record Part(Map<String, String> headers, byte[] body) {
    String contentType() {
      return headers.get("content-type");
    }
  }

  private Multipart() {}

  static String boundary(String contentType) {
    if (contentType == null) {
      return null;
    }
    for (String param : contentType.split(";")) {
      String p = param.trim();
      if (p.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
        String value = p.substring("boundary=".length()).trim();
        if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
          value = value.substring(1, value.length() - 1);
        }
        return value.isEmpty() ? null : value;
      }
    }
    return null;
  }

  static List<Part> parse(byte[] body, String boundary) {
    byte[] delimiter = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
    List<Part> parts = new ArrayList<>();
    int at = indexOf(body, delimiter, 0);
    if (at < 0) {
      throw malformed();
    }
    while (true) {
      int lineEnd = at + delimiter.length;
      if (lineEnd + 2 <= body.length && body[lineEnd] == '-' && body[lineEnd + 1] == '-') {
        return parts;
      }
      int headersStart = skipLineBreak(body, lineEnd);
      int headersEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), headersStart);
      if (headersEnd < 0) {
        throw malformed();
      }
      Map<String, String> headers = parseHeaders(
          new String(body, headersStart, headersEnd - headersStart, StandardCharsets.ISO_8859_1));
      int contentStart = headersEnd + 4;
      byte[] next = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
      int contentEnd = indexOf(body, next, contentStart);
      if (contentEnd < 0) {
        throw malformed();
      }
      parts.add(new Part(headers, Arrays.copyOfRange(body, contentStart, contentEnd)));
      at = contentEnd + 2;
    }
  }

  private static int skipLineBreak(byte[] body, int at) {
    if (at + 1 < body.length && body[at] == '\r' && body[at + 1] == '\n') {
      return at + 2;
    }
    throw malformed();
  }

  private static Map<String, String> parseHeaders(String block) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (String line : block.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
      }
    }
    return headers;
  }

  private static int indexOf(byte[] haystack, byte[] needle, int from) {
    outer:
    for (int i = Math.max(0, from); i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  private static HttpError malformed() {
    return HttpError.badRequest("invalid", "Malformed multipart body.");
  }
}
