package dev.once.local.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.local.http.RawHttp;
import dev.once.wire.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Malformed requests get the JSON API's error shape and a 4xx, never a crash or a stack trace. */
class StorageBadInputTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static StorageStandIn standIn;

  @BeforeAll
  static void start() {
    standIn = StorageStandIn.start(StorageStandIn.Options.defaults().withMaxObjectBytes(1024));
  }

  @AfterAll
  static void stop() {
    standIn.close();
  }

  private static HttpResponse<String> send(String method, String path, String contentType, byte[] body)
      throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(standIn.baseUrl() + path))
        .timeout(Duration.ofSeconds(10))
        .method(method,
            body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) {
      request.header("Content-Type", contentType);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Asserts the JSON API error shape and returns its single {@code errors[]} entry. */
  private static JsonNode assertError(HttpResponse<String> response, int code) {
    assertEquals(code, response.statusCode(), response.body());
    JsonNode error = Json.parseTrusted(response.body()).get("error");
    assertEquals(code, error.get("code").asInt());
    assertTrue(error.get("message").isTextual());
    assertTrue(!response.body().contains("Exception"), "no stack trace: " + response.body());
    JsonNode detail = error.get("errors").get(0);
    assertEquals("global", detail.get("domain").asText());
    return detail;
  }

  @Test
  void unknownPath_is404() throws Exception {
    assertError(send("GET", "/storage/v2/whatever", null, null), 404);
    assertError(send("PATCH", "/storage/v1/b/bucket-x/o/doc", "application/json", "{}".getBytes()), 404);
  }

  @Test
  void garbageMultipartMetadata_is400() throws Exception {
    String body = "--XX\r\nContent-Type: application/json\r\n\r\n{not json\r\n--XX\r\nContent-Type: text/plain\r\n\r\n"
        + "hello\r\n--XX--\r\n";
    JsonNode detail = assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=multipart",
        "multipart/related; boundary=XX", body.getBytes(StandardCharsets.UTF_8)), 400);
    assertEquals("parseError", detail.get("reason").asText());
  }

  @Test
  void garbageMultipartFraming_is400() throws Exception {
    assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=multipart",
        "multipart/related; boundary=XX", "just bytes".getBytes()), 400);
    assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=multipart", "text/plain",
        "just bytes".getBytes()), 400);
  }

  @Test
  void unknownUploadType_andMissingName_are400() throws Exception {
    assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=sideways", "text/plain", "x".getBytes()), 400);
    JsonNode detail = assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=media", "text/plain",
        "x".getBytes()), 400);
    assertEquals("required", detail.get("reason").asText());
  }

  @Test
  void invalidNames_are400() throws Exception {
    assertError(send("POST", "/upload/storage/v1/b/UPPER/o?uploadType=media&name=a", "text/plain", "x".getBytes()),
        400);
    assertError(send("POST", "/upload/storage/v1/b/bucket-x/o?uploadType=media&name=..", "text/plain",
        "x".getBytes()), 400);
    // The JDK server refuses a malformed URL before any handler runs (as Google's front end does): still a 400.
    String raw = RawHttp.get(standIn.port(), "/storage/v1/b/bucket-x/o/%zz");
    assertEquals(400, RawHttp.status(raw), raw);
  }

  @Test
  void nonHttpGarbage_doesNotHurtTheServer() throws Exception {
    RawHttp.exchange(standIn.port(), "\u0000\u0001 garbage garbage\r\n\r\n");
    RawHttp.exchange(standIn.port(), "GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n");
    assertError(send("GET", "/storage/v1/b/never-made/o", null, null), 404);
  }

  @Test
  void bucketListWithoutProject_is400() throws Exception {
    assertEquals("required", assertError(send("GET", "/storage/v1/b", null, null), 400).get("reason").asText());
  }

  @Test
  void nonNumericGeneration_is400() throws Exception {
    send("POST", "/upload/storage/v1/b/bucket-y/o?uploadType=media&name=doc", "text/plain", "x".getBytes());
    assertError(send("GET", "/storage/v1/b/bucket-y/o/doc?generation=latest", null, null), 400);
  }

  @Test
  void oversizedUpload_is413_andNothingIsStored() throws Exception {
    JsonNode detail = assertError(send("POST", "/upload/storage/v1/b/bucket-z/o?uploadType=media&name=big",
        "application/octet-stream", new byte[4096]), 413);
    assertEquals("uploadTooLarge", detail.get("reason").asText());
    assertError(send("GET", "/storage/v1/b/bucket-z/o/big", null, null), 404);
  }

  @Test
  void missingBucketAndObject_are404_withNotFoundReason() throws Exception {
    JsonNode detail = assertError(send("GET", "/storage/v1/b/never-made/o", null, null), 404);
    assertEquals("notFound", detail.get("reason").asText());
    send("POST", "/upload/storage/v1/b/bucket-w/o?uploadType=media&name=doc", "text/plain", "x".getBytes());
    assertError(send("GET", "/storage/v1/b/bucket-w/o/other?alt=media", null, null), 404);
  }

  @Test
  void simpleMediaUpload_isServed_andCountedInAdmin() throws Exception {
    HttpResponse<String> created = send("POST", "/upload/storage/v1/b/bucket-v/o?uploadType=media&name=a%2Fb.txt",
        "text/plain", "hello".getBytes());
    assertEquals(200, created.statusCode(), created.body());
    assertEquals("a/b.txt", Json.parseTrusted(created.body()).get("name").asText());
    HttpResponse<String> read = send("GET", "/download/storage/v1/b/bucket-v/o/a%2Fb.txt?alt=media", null, null);
    assertEquals("hello", read.body());
    assertEquals("text/plain", read.headers().firstValue("Content-Type").orElseThrow());

    JsonNode counters = Json.parseTrusted(send("GET", "/_admin/counters", null, null).body());
    assertTrue(counters.get("objects.insert").asLong() >= 1);
    assertTrue(counters.get("objects.download").asLong() >= 1);
  }

  @Test
  void adminSwitches_workOverHttp() throws Exception {
    assertEquals(200, send("POST", "/_admin/fail?count=1&status=503", null, null).statusCode());
    assertError(send("GET", "/storage/v1/b/bucket-v/o", null, null), 503);
    assertEquals(200, send("POST", "/_admin/notify-twice?enabled=true", null, null).statusCode());
    send("POST", "/upload/storage/v1/b/bucket-u/o?uploadType=media&name=doc", "text/plain", "x".getBytes());
    assertEquals(200, send("POST", "/_admin/notify-twice?enabled=false", null, null).statusCode());
    JsonNode sent = Json.parseTrusted(send("GET", "/_admin/notifications", null, null).body());
    long forDoc = 0;
    for (JsonNode n : sent) {
      if (n.get("bucket").asText().equals("bucket-u")) {
        forDoc++;
      }
    }
    assertEquals(2, forDoc);
    assertError(send("POST", "/_admin/fail?count=x", null, null), 400);
    assertError(send("POST", "/_admin/fail?count=1&status=200", null, null), 400);
    assertError(send("GET", "/_admin/nothing", null, null), 404);
  }
}
