package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.storage.Blob;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.WebhookDelivery;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.gemini.WebhookSigner;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile and broken inputs, kept as files under {@code src/test/resources/corpus}, sent to the five functions:
 * each gets its documented answer, no answer leaks a stack trace or a secret, nothing is written to the ledger,
 * the analyses or the billing, and afterwards every function serves a good event.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BadInputCorpusIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path CORPUS = Path.of("src/test/resources/corpus");
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final String RETIRED_SECRET = WebhookSigner.newSecret();
  private static final String FOREIGN_SECRET = WebhookSigner.newSecret();
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    stack = PipelineStack.shared(PipelineStack.Config.sync().batch());
  }

  static List<Path> corpus() throws IOException {
    try (Stream<Path> files = Files.list(CORPUS)) {
      return files.filter(f -> f.toString().endsWith(".json")).sorted().toList();
    }
  }

  @Test
  @Order(1)
  void theCorpusHoldsAtLeastFortyCasesAcrossTheFunctions() throws IOException {
    List<Path> cases = corpus();
    assertTrue(cases.size() >= 40, "cases: " + cases.size());
    for (String function : PipelineStack.FUNCTIONS) {
      assertTrue(cases.stream().anyMatch(c -> c.getFileName().toString().contains(function)), function);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corpus")
  @Order(2)
  void hostileInput_getsItsDocumentedAnswer_leaksNothing_andWritesNothing(Path file) throws Exception {
    JsonNode spec = JSON.readTree(file.toFile());
    byte[] body = body(spec);
    HttpRequest.Builder request = HttpRequest.newBuilder(stack.function(spec.path("function").asText()).url())
        .timeout(Bounds.CALL)
        .method(spec.path("method").asText("POST"), body.length == 0
            ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    for (Iterator<Map.Entry<String, JsonNode>> headers = spec.path("headers").fields(); headers.hasNext();) {
      Map.Entry<String, JsonNode> header = headers.next();
      request.header(header.getKey(), header.getValue().asText());
    }
    if (spec.has("sign")) {
      sign(request, spec.path("sign"), body);
    }
    int records = stack.ledgerRecords();
    int analyses = stack.documents("analyses").size();
    int billing = stack.documents("billing").size();
    JsonNode expect = spec.path("expect");
    HttpResponse<String> response;
    try {
      response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException closed) {
      // A body over the limit is answered 413 once the limit is read, and the connection closed on the rest: a
      // client still sending may see the close (a reset) before the answer. Refused either way; nothing written.
      assertEquals(413, expect.path("status").asInt(), spec.path("name") + ": " + closed);
      assertNothingWritten(records, analyses, billing);
      return;
    }
    assertEquals(expect.path("status").asInt(), response.statusCode(), spec.path("name") + ": " + response.body());
    if (expect.has("bodyStatus")) {
      assertEquals(expect.path("bodyStatus").asText(), JSON.readTree(response.body()).path("status").asText(),
          response.body());
    }
    for (String leak : List.of("Exception", "\tat ", "java.", "dev.once", stack.webhookSecret.substring(6, 26),
        stack.environment().get("GEMINI_API_KEY"))) {
      assertFalse(response.body().contains(leak), "the answer leaks \"" + leak + "\": " + response.body());
    }
    assertNothingWritten(records, analyses, billing);
  }

  /** The functions answer after their writes, so any write the input caused is visible now. */
  private static void assertNothingWritten(int records, int analyses, int billing) {
    assertEquals(records, stack.ledgerRecords(), "no ledger record");
    assertEquals(analyses, stack.documents("analyses").size(), "no analysis");
    assertEquals(billing, stack.documents("billing").size(), "no billing entry");
  }

  /**
   * Cloud Scheduler POSTs. A probe with any other method (a health check's GET, a HEAD) is refused before a run
   * starts: Gemini is not listed, and the answer says what to send.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"GET", "HEAD"})
  @Order(3)
  void theReconciler_refusesAnythingButPost_withoutStartingARun(String method) throws Exception {
    long listed = stack.gemini.count("batches.list");
    HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(stack.function("GeminiReconciler").url())
        .timeout(Bounds.CALL).method(method, HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());

    assertEquals(405, response.statusCode(), response.body());
    assertEquals(List.of("POST"), response.headers().allValues("Allow"));
    assertEquals(listed, stack.gemini.count("batches.list"), "no reconciliation ran");
    int pages = stack.reconcile().path("pages").asInt();
    assertTrue(pages >= 1, "a POST runs one");
    assertEquals(listed + pages, stack.gemini.count("batches.list"), "one listing call per page of the POST's run");
  }

  @Test
  @Order(4)
  void afterTheCorpus_everyFunctionServesAGoodEvent() throws Exception {
    Blob blob = stack.upload("after-corpus/invoice.pdf", InvoicePdf.of("C1"), "application/pdf");
    String key = key(blob);
    // Deadlines for a machine shared with other forks: the webhook's hand-off alone took 21-31 s at a load of 25.
    String job = Await.value(Bounds.PATIENT, () -> stack.byKey("analyses", key).stream()
        .map(a -> a.getString("job")).filter(Objects::nonNull).findFirst(), "DocumentUploaded submits a job");
    stack.gemini.finish(job, BatchState.SUCCEEDED);
    Await.until(Bounds.PATIENT, () -> stack.notifiedWith(key).size() == 1,
        "GeminiWebhook hands the job off, BatchCompleted completes it and MessageDelivered notifies it");
    // Like Google, the stand-in retries a delivery that timed out (-1) on a loaded machine, and the timed-out one
    // may have handed the job off already: the delivery counts once it is answered with a 200, exactly once.
    Await.until(Bounds.PATIENT, () -> webhookStatuses(job).contains(200), "the webhook answers 200");
    List<Integer> statuses = webhookStatuses(job);
    assertEquals(200, statuses.getLast(), "statuses: " + statuses);
    assertEquals(1, statuses.stream().filter(s -> s == 200).count(), "statuses: " + statuses);
    assertTrue(stack.reconcile().path("seen").asInt() >= 1, "GeminiReconciler runs");
  }

  private static List<Integer> webhookStatuses(String job) {
    return stack.gemini.webhookDeliveries().stream().filter(d -> d.batchName().equals(job))
        .map(WebhookDelivery::status).toList();
  }

  private static byte[] body(JsonNode spec) {
    if (spec.has("bodyBase64")) {
      return Base64.getDecoder().decode(spec.path("bodyBase64").asText());
    }
    if (spec.has("bodyRepeat")) {
      JsonNode repeat = spec.path("bodyRepeat");
      byte[] fill = new byte[repeat.path("bytes").asInt()];
      Arrays.fill(fill, repeat.path("fill").asText().getBytes(StandardCharsets.US_ASCII)[0]);
      return concat(repeat.path("prefix").asText().getBytes(StandardCharsets.UTF_8), fill,
          repeat.path("suffix").asText().getBytes(StandardCharsets.UTF_8));
    }
    return spec.path("body").asText("").getBytes(StandardCharsets.UTF_8);
  }

  /** Signs the delivery as the case says: which secret, when, which scheme, and whether the body then changes. */
  private static void sign(HttpRequest.Builder request, JsonNode sign, byte[] body) {
    String secret = switch (sign.path("secret").asText()) {
      case "current" -> stack.webhookSecret;
      case "retired" -> RETIRED_SECRET;
      default -> FOREIGN_SECRET;
    };
    String id = sign.path("id").asText("msg_corpus_" + System.nanoTime());
    long timestamp = Instant.now().getEpochSecond() + sign.path("timestampOffset").asLong(0);
    String signature = WebhookSigner.fromSecret(secret).sign(id, timestamp, body);
    if (sign.has("scheme")) {
      signature = sign.path("scheme").asText() + signature.substring(signature.indexOf(','));
    }
    if (sign.has("signature")) {
      signature = sign.path("signature").asText();
    }
    request.header("webhook-id", id);
    request.header("webhook-timestamp", sign.path("timestamp").asText(String.valueOf(timestamp)));
    request.header("webhook-signature", signature);
    if (sign.path("tamper").asBoolean(false)) {
      byte[] changed = body.clone();
      changed[changed.length - 3] = (byte) (changed[changed.length - 3] == 'x' ? 'y' : 'x');
      request.method("POST", HttpRequest.BodyPublishers.ofByteArray(changed));
    }
  }

  private static byte[] concat(byte[]... parts) {
    List<byte[]> list = new ArrayList<>(List.of(parts));
    byte[] all = new byte[list.stream().mapToInt(p -> p.length).sum()];
    int at = 0;
    for (byte[] part : list) {
      System.arraycopy(part, 0, all, at, part.length);
      at += part.length;
    }
    return all;
  }
}
