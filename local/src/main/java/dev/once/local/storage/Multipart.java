package dev.once.local.storage;

import dev.once.wire.http.HttpError;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code multipart/related} body (metadata part, then media part), framed as RFC 2046 §5.1.1 allows: a preamble
 * before the first delimiter, transport padding after a delimiter, parts without headers, an epilogue, and CRLF
 * line breaks or the bare LF that gcloud sends (Python's email generator writes {@code \n}).
 */
final class Multipart {
  record Part(Map<String, String> headers, byte[] body) {
    String contentType() {
      return headers.get("content-type");
    }
  }

  /** The boundary parameter: a quoted string (RFC 2045) or a token, in any case, spaces around '=' allowed. */
  private static final Pattern BOUNDARY =
      Pattern.compile("(?i)(?:^|;)\\s*boundary\\s*=\\s*(?:\"([^\"]*)\"|([^;\\s]+))");
  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] LF = {'\n'};

  private Multipart() {}

  /** The parts of {@code body}, delimited by the boundary its {@code contentType} declares. */
  static List<Part> parse(byte[] body, String contentType) {
    String declared = boundary(contentType);
    if (declared == null) {
      throw HttpError.badRequest("invalid", "Content-Type must be multipart/related with a boundary.");
    }
    byte[] dashBoundary = ("--" + boundaryInBody(body, declared)).getBytes(StandardCharsets.ISO_8859_1);
    int at = nextDelimiter(body, dashBoundary, 0);
    if (at < 0) {
      throw malformed();
    }
    byte[] lineBreak = null;
    List<Part> parts = new ArrayList<>();
    while (true) {
      int after = at + dashBoundary.length;
      if (after + 1 < body.length && body[after] == '-' && body[after + 1] == '-') {
        return parts; // the close delimiter; what follows is the epilogue
      }
      int partStart = endOfDelimiterLine(body, after);
      if (lineBreak == null) {
        // The first delimiter line says which line break the body uses, so content ending in CR stays intact.
        lineBreak = body[partStart - 2] == '\r' ? CRLF : LF;
      }
      int next = nextDelimiter(body, dashBoundary, partStart);
      // The line break before a delimiter belongs to the delimiter, not to the part's content.
      int partEnd = next - lineBreak.length;
      if (next < 0 || partEnd < partStart || !regionEquals(body, partEnd, lineBreak)) {
        throw malformed();
      }
      parts.add(part(body, partStart, partEnd, lineBreak));
      at = next;
    }
  }

  /** The boundary parameter of a Content-Type, without the quotes of a quoted string; null if there is none. */
  static String boundary(String contentType) {
    if (contentType == null) {
      return null;
    }
    Matcher m = BOUNDARY.matcher(contentType);
    if (!m.find()) {
      return null;
    }
    String value = m.group(1) != null ? m.group(1) : m.group(2);
    return value.isEmpty() ? null : value;
  }

  /**
   * gcloud declares {@code boundary='===…=='}: Python's repr of the boundary (apitools' transfer.py formats it with
   * {@code %r}), while its body delimits with {@code --===…==}, the quotes left out; Cloud Storage accepts that. A
   * token may itself hold single quotes (they are boundary characters in RFC 2046), so the body decides: the
   * boundary as declared if the body uses it, else without its single quotes.
   */
  private static String boundaryInBody(byte[] body, String declared) {
    if (declared.length() > 2 && declared.startsWith("'") && declared.endsWith("'")
        && nextDelimiter(body, ("--" + declared).getBytes(StandardCharsets.ISO_8859_1), 0) < 0) {
      return declared.substring(1, declared.length() - 1);
    }
    return declared;
  }

  /** Where the next delimiter line's "--boundary" starts, at or after {@code from}; -1 if there is none. */
  private static int nextDelimiter(byte[] body, byte[] dashBoundary, int from) {
    for (int i = indexOf(body, dashBoundary, from); i >= 0; i = indexOf(body, dashBoundary, i + 1)) {
      boolean lineStart = i == 0 || body[i - 1] == '\n';
      int after = i + dashBoundary.length;
      boolean closes = after + 1 < body.length && body[after] == '-' && body[after + 1] == '-';
      if (lineStart && (closes || lineEnd(body, after) >= 0)) {
        return i;
      }
    }
    return -1;
  }

  private static int endOfDelimiterLine(byte[] body, int at) {
    int next = lineEnd(body, at);
    if (next < 0) {
      throw malformed();
    }
    return next;
  }

  /** After optional transport padding (spaces, tabs) and a CRLF or LF at {@code at}: the next line; else -1. */
  private static int lineEnd(byte[] body, int at) {
    int i = at;
    while (i < body.length && (body[i] == ' ' || body[i] == '\t')) {
      i++;
    }
    if (i < body.length && body[i] == '\n') {
      return i + 1;
    }
    if (i + 1 < body.length && body[i] == '\r' && body[i + 1] == '\n') {
      return i + 2;
    }
    return -1;
  }

  /** A part: header lines, a blank line, the content; or no headers at all (the part starts with a blank line). */
  private static Part part(byte[] body, int start, int end, byte[] lineBreak) {
    if (start == end) {
      return new Part(Map.of(), new byte[0]);
    }
    if (regionEquals(body, start, lineBreak)) {
      return new Part(Map.of(), Arrays.copyOfRange(body, start + lineBreak.length, end));
    }
    byte[] blankLine = new byte[lineBreak.length * 2];
    System.arraycopy(lineBreak, 0, blankLine, 0, lineBreak.length);
    System.arraycopy(lineBreak, 0, blankLine, lineBreak.length, lineBreak.length);
    int headersEnd = indexOf(body, blankLine, start);
    if (headersEnd < 0 || headersEnd + blankLine.length > end) {
      throw malformed();
    }
    String block = new String(body, start, headersEnd - start, StandardCharsets.ISO_8859_1);
    return new Part(headers(block, new String(lineBreak, StandardCharsets.ISO_8859_1)),
        Arrays.copyOfRange(body, headersEnd + blankLine.length, end));
  }

  /** Header lines, names lower-cased; a line starting with a space or tab continues the one before (RFC 5322). */
  private static Map<String, String> headers(String block, String lineBreak) {
    Map<String, String> headers = new LinkedHashMap<>();
    String last = null;
    for (String line : block.split(Pattern.quote(lineBreak))) {
      if (last != null && !line.isEmpty() && (line.charAt(0) == ' ' || line.charAt(0) == '\t')) {
        headers.put(last, (headers.get(last) + " " + line.trim()).trim());
        continue;
      }
      int colon = line.indexOf(':');
      if (colon > 0) {
        last = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        headers.put(last, line.substring(colon + 1).trim());
      }
    }
    return headers;
  }

  private static boolean regionEquals(byte[] body, int at, byte[] expected) {
    if (at < 0 || at + expected.length > body.length) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      if (body[at + i] != expected[i]) {
        return false;
      }
    }
    return true;
  }

  private static int indexOf(byte[] haystack, byte[] needle, int from) {
    for (int i = Math.max(0, from); i <= haystack.length - needle.length; i++) {
      if (regionEquals(haystack, i, needle)) {
        return i;
      }
    }
    return -1;
  }

  private static HttpError malformed() {
    return HttpError.badRequest("invalid", "Malformed multipart body.");
  }
}
