package dev.once.local.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.once.wire.http.HttpError;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every boundary form RFC 2046 allows, and gcloud's, with CRLF and LF line breaks: each body below splits into the
 * same two parts, a JSON metadata part and the media, byte for byte.
 */
class MultipartTest {
  private static final String METADATA = "{\"name\":\"doc.pdf\"}";
  private static final String MEDIA = "%PDF-1.4 body\nwith lines\r\nand a last CR\r";

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  /** Two parts delimited by {@code --delimiter}, every line break {@code nl}. */
  private static byte[] body(String delimiter, String nl) {
    return bytes("--" + delimiter + nl + "Content-Type: application/json" + nl + nl + METADATA + nl
        + "--" + delimiter + nl + "Content-Type: application/pdf" + nl + nl + MEDIA + nl
        + "--" + delimiter + "--" + nl);
  }

  private static void assertTwoParts(List<Multipart.Part> parts) {
    assertEquals(2, parts.size());
    assertEquals("application/json", parts.get(0).contentType());
    assertEquals(METADATA, new String(parts.get(0).body(), StandardCharsets.ISO_8859_1));
    assertEquals("application/pdf", parts.get(1).contentType());
    assertArrayEquals(bytes(MEDIA), parts.get(1).body(), "the media, its own CR and LF included");
  }

  @Test
  void quotedBoundary_asGoogleJavaClientSends_withCrlf() {
    assertTwoParts(Multipart.parse(body("__END_OF_PART__x y", "\r\n"),
        "multipart/related; boundary=\"__END_OF_PART__x y\""));
  }

  @Test
  void tokenBoundary_withCrlfOrLf_anyCaseAndSpacing() {
    assertTwoParts(Multipart.parse(body("simple-boundary", "\r\n"), "multipart/related; boundary=simple-boundary"));
    assertTwoParts(Multipart.parse(body("simple-boundary", "\n"), "Multipart/Related; type=\"application/json\";"
        + " BOUNDARY = simple-boundary"));
  }

  /**
   * What gcloud 528 sends (captured from its traffic): {@code boundary='===…=='}, Python's repr, while the body
   * delimits without the quotes, every line ending in a bare LF, and MIME-Version headers in each part.
   */
  @Test
  void singleQuotedBoundary_asGcloudSendsIt_delimitsWithoutTheQuotes() {
    String nl = "\n";
    byte[] gcloud = bytes("--===============6033527968193920822==" + nl + "Content-Type: application/json" + nl
        + "MIME-Version: 1.0" + nl + nl + METADATA + nl + "--===============6033527968193920822==" + nl
        + "Content-Type: application/pdf" + nl + "MIME-Version: 1.0" + nl + "Content-Transfer-Encoding: binary" + nl
        + nl + MEDIA + nl + "--===============6033527968193920822==--" + nl);
    List<Multipart.Part> parts =
        Multipart.parse(gcloud, "multipart/related; boundary='===============6033527968193920822=='");
    assertTwoParts(parts);
    assertEquals("binary", parts.get(1).headers().get("content-transfer-encoding"));
  }

  /** Single quotes are boundary characters too: a body that delimits with them is taken as written. */
  @Test
  void singleQuotesInsideATokenBoundary_stayPartOfIt() {
    assertTwoParts(Multipart.parse(body("'quoted'", "\r\n"), "multipart/related; boundary='quoted'"));
  }

  @Test
  void preambleTransportPaddingFoldedHeadersAndEpilogue_areAllowed() {
    String nl = "\r\n";
    byte[] body = bytes("a preamble, ignored" + nl + "--b \t" + nl + "Content-Type:" + nl + " application/json" + nl
        + nl + METADATA + nl + "--b" + nl + "Content-Type: application/pdf" + nl + nl + MEDIA + nl + "--b--  " + nl
        + "an epilogue, ignored" + nl);
    assertTwoParts(Multipart.parse(body, "multipart/related; boundary=b"));
  }

  @Test
  void aPartWithoutHeaders_hasNoneAndItsContent() {
    List<Multipart.Part> parts = Multipart.parse(bytes("--b\n\ncontent\n--b--"), "multipart/related; boundary=b");
    assertEquals(1, parts.size());
    assertEquals(Map.of(), parts.get(0).headers());
    assertEquals("content", new String(parts.get(0).body(), StandardCharsets.ISO_8859_1));
  }

  /** The boundary appearing inside a line, or followed by more characters, does not delimit. */
  @Test
  void theBoundaryInsideContent_doesNotSplitIt() {
    List<Multipart.Part> parts = Multipart.parse(
        bytes("--b\r\n\r\nx --b y\r\n--bc\r\n--b--\r\n"), "multipart/related; boundary=b");
    assertEquals(1, parts.size());
    assertEquals("x --b y\r\n--bc", new String(parts.get(0).body(), StandardCharsets.ISO_8859_1));
  }

  @Test
  void malformedBodies_are400() {
    for (String[] c : new String[][] {
        {"multipart/related", "--b\r\n\r\nx\r\n--b--"},              // no boundary parameter
        {"multipart/related; boundary=\"\"", "--\r\n\r\nx\r\n----"},    // an empty one
        {"multipart/related; boundary=b", "just bytes"},               // no delimiter
        {"multipart/related; boundary=b", "--b\r\n\r\nno close delimiter"},
        {"multipart/related; boundary=b", "--b\r\nContent-Type: a/b\r\n--b--"}}) { // headers, no blank line
      HttpError error = assertThrows(HttpError.class, () -> Multipart.parse(bytes(c[1]), c[0]), c[1]);
      assertEquals(400, error.code(), c[1]);
    }
  }
}
