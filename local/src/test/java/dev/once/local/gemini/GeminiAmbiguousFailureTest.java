package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.errors.GenAiIOException;
import com.google.genai.errors.ServerException;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.ClientOptions;
import com.google.genai.types.Content;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.JobState;
import com.google.genai.types.Part;
import com.google.genai.types.UploadFileConfig;
import dev.once.local.http.AmbiguousFailure;
import dev.once.wire.http.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Calls the stand-in carries out and then fails (late, reset, 5xx), seen through the real google-genai SDK with
 * its own retries off: the caller gets an error, the counters say exactly what was done.
 */
class GeminiAmbiguousFailureTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private GeminiStandIn standIn;

  @BeforeEach
  void start() {
    standIn = GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookMode(WebhookMode.NEVER));
  }

  @AfterEach
  void stop() {
    standIn.close();
  }

  /** The SDK with its retries off; {@code okHttpRetries} is OkHttp's own silent retry of a failed connection. */
  private Client client(int timeoutMillis, boolean okHttpRetries) {
    return Client.builder().apiKey("k")
        .httpOptions(HttpOptions.builder().baseUrl(standIn.baseUrl()).timeout(timeoutMillis)
            .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build())
        .clientOptions(ClientOptions.builder().customHttpClient(
            new OkHttpClient.Builder().retryOnConnectionFailure(okHttpRetries).build()).build())
        .build();
  }

  private static Content prompt(String text) {
    return Content.fromParts(Part.fromText(text));
  }

  private static BatchJobSource oneRequest(String text) {
    return BatchJobSource.builder().inlinedRequests(InlinedRequest.builder().contents(prompt(text))
        .metadata(Map.of("key", text)).build()).build();
  }

  private long count(String name) {
    return standIn.count(name);
  }

  @Test
  void lateGenerateContent_timesOutInTheSdk_afterOnePaidCall() {
    standIn.ambiguousNext("generateContent", 1, AmbiguousFailure.late(Duration.ofSeconds(5)));
    try (Client client = client(500, false)) {
      GenAiIOException timeout = assertThrows(GenAiIOException.class,
          () -> client.models.generateContent(MODEL, "late", null));
      assertInstanceOf(IOException.class, timeout.getCause());

      assertEquals(1, count("generateContent.carriedOut"), "the paid call was made");
      assertEquals(1, count("generateContent.ambiguous"));
    }
    // On a patient client: an unarmed answer can take longer than 500 ms on a busy machine, and that is no failure.
    try (Client client = client(10_000, false)) {
      assertNotNull(client.models.generateContent(MODEL, "on time", null).text(), "one armed failure, used up");
      assertEquals(2, count("generateContent.carriedOut"));
      assertEquals(1, count("ambiguousFailures"));
    }
  }

  @Test
  void resetGenerateContent_failsInTheSdk_afterOnePaidCall() {
    try (Client client = client(10_000, false)) {
      client.models.generateContent(MODEL, "warm the connection pool", null);
      standIn.ambiguousNext("generateContent", 1, AmbiguousFailure.RESET);

      GenAiIOException reset = assertThrows(GenAiIOException.class,
          () -> client.models.generateContent(MODEL, "reset", null));
      assertInstanceOf(IOException.class, reset.getCause());
      assertEquals(2, count("generateContent.carriedOut"), "both calls were made");
      assertEquals(1, count("generateContent.ambiguous"));
    }
  }

  @Test
  void resetOnAPooledConnection_isSilentlyRetriedByOkHttp_soOneSdkCallPaysTwice() {
    // OkHttp retries a request whose pooled connection failed, POSTs included, unless retryOnConnectionFailure is
    // off; the SDK's retry options do not turn it off. The caller sees a success and never learns of the first call.
    try (Client client = client(10_000, true)) {
      client.models.generateContent(MODEL, "warm the connection pool", null);
      standIn.ambiguousNext("generateContent", 1, AmbiguousFailure.RESET);

      assertNotNull(client.models.generateContent(MODEL, "reset once", null).text());
      assertEquals(3, count("generateContent.carriedOut"), "warm-up, the reset call and OkHttp's silent retry");
      assertEquals(1, count("generateContent.ambiguous"));
    }
  }

  @Test
  void serverErrorAfterGenerateContent_isA500_afterOnePaidCall() {
    standIn.ambiguousNext("generateContent", 1, AmbiguousFailure.serverError(503));
    try (Client client = client(10_000, false)) {
      ServerException error = assertThrows(ServerException.class,
          () -> client.models.generateContent(MODEL, "overloaded?", null));
      assertEquals(503, error.code());
      assertEquals(1, count("generateContent.carriedOut"));
      assertEquals(1, count("generateContent"));
    }
  }

  @Test
  void lateBatchCreate_failsInTheSdk_butTheJobExists_andTheListNamesIt() {
    standIn.ambiguousNext("batchGenerateContent", 1, AmbiguousFailure.late(Duration.ofSeconds(5)));
    try (Client client = client(500, false)) {
      assertThrows(GenAiIOException.class, () -> client.batches.create(MODEL, oneRequest("doc-7"),
          CreateBatchJobConfig.builder().displayName("once-doc-7").build()));
    }
    assertEquals(1, count("batchGenerateContent.carriedOut"), "the job was created");
    assertEquals(1, standIn.batchNames().size());

    try (Client client = client(10_000, false)) {
      List<BatchJob> listed = new ArrayList<>();
      client.batches.list(null).forEach(listed::add);
      assertEquals(1, listed.size());
      assertEquals("once-doc-7", listed.get(0).displayName().orElseThrow(), "a retry can find it by its name");
      assertEquals(standIn.batchNames().get(0), listed.get(0).name().orElseThrow());
      assertEquals(JobState.Known.JOB_STATE_PENDING, listed.get(0).state().orElseThrow().knownEnum());
    }
  }

  @Test
  void ambiguousGetsListsAndDownloads_areCountedAsCarriedOut(@TempDir Path dir) {
    try (Client client = client(10_000, false); Client impatient = client(500, false)) {
      String fileJob = client.batches.create(MODEL, BatchJobSource.builder().fileName(
          client.files.upload("{\"key\":\"a\",\"request\":{\"contents\":[{\"parts\":[{\"text\":\"a\"}]}]}}\n"
              .getBytes(StandardCharsets.UTF_8),
              UploadFileConfig.builder().mimeType("application/jsonl").build())
              .name().orElseThrow())
          .build(), CreateBatchJobConfig.builder().displayName("file").build())
          .name().orElseThrow();
      standIn.completeAll();

      standIn.ambiguousNext("batches.get", 1, AmbiguousFailure.RESET);
      assertThrows(GenAiIOException.class, () -> client.batches.get(fileJob, null));
      String output = client.batches.get(fileJob, null).dest().orElseThrow().fileName().orElseThrow();
      assertEquals(2, count("batches.get.carriedOut"));
      assertEquals(2, count("batches.get.ended"), "both looked at the ended job");

      standIn.ambiguousNext("files.download", 1, AmbiguousFailure.late(Duration.ofSeconds(5)));
      assertThrows(GenAiIOException.class,
          () -> impatient.files.download(output, dir.resolve("out.jsonl").toString(), null));
      assertEquals(1, count("files.download.carriedOut"), "the file was served");

      standIn.ambiguousNext("batches.list", 1, AmbiguousFailure.SERVER_ERROR);
      assertThrows(ServerException.class, () -> client.batches.list(null));
      assertEquals(1, count("batches.list.carriedOut"));
      assertEquals(3, count("ambiguousFailures"));
    }
  }

  @Test
  void aRequestTheApiRefuses_doesNotUseUpAnArmedFailure() {
    standIn.ambiguousNext("generateContent", 1, AmbiguousFailure.SERVER_ERROR);
    try (Client client = client(10_000, false)) {
      assertThrows(ClientException.class,
          () -> client.models.generateContent("not-a-model", "x", null));
      assertEquals(0, count("generateContent.carriedOut"));
      assertThrows(ServerException.class, () -> client.models.generateContent(MODEL, "x", null));
      assertEquals(1, count("generateContent.carriedOut"));
    }
  }

  @Test
  void cancel_endsARunningJob() {
    try (Client client = client(10_000, false)) {
      String job = client.batches.create(MODEL, oneRequest("stray"),
          CreateBatchJobConfig.builder().displayName("stray").build()).name().orElseThrow();
      standIn.advance();
      assertEquals(BatchState.RUNNING, standIn.state(job));

      client.batches.cancel(job, null);

      assertEquals(BatchState.CANCELLED, standIn.state(job));
      assertEquals(JobState.Known.JOB_STATE_CANCELLED, client.batches.get(job, null).state().orElseThrow().knownEnum());
      assertEquals(1, count("batches.cancel.carriedOut"));
    }
  }

  @Test
  void adminEndpoint_armsTheSameFaults_andCountersShowThem() throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> armed = http.send(HttpRequest.newBuilder(URI.create(standIn.baseUrl()
        + "/_admin/ambiguous?operation=generateContent&count=2&failure=reset"))
        .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, armed.statusCode(), armed.body());
    HttpRequest generate = HttpRequest.newBuilder(URI.create(standIn.baseUrl()
        + "/v1beta/models/" + MODEL + ":generateContent"))
        .timeout(Duration.ofSeconds(5)).header("x-goog-api-key", "k").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"contents\":[{\"parts\":[{\"text\":\"hi\"}]}]}")).build();

    for (int i = 0; i < 2; i++) {
      assertThrows(IOException.class, () -> http.send(generate, HttpResponse.BodyHandlers.ofString()));
    }
    assertEquals(200, http.send(generate, HttpResponse.BodyHandlers.ofString()).statusCode());

    String counters = http.send(HttpRequest.newBuilder(URI.create(standIn.baseUrl() + "/_admin/counters"))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    assertEquals(3, Json.parseTrusted(counters).get("generateContent.carriedOut").asLong());
    assertEquals(2, Json.parseTrusted(counters).get("generateContent.ambiguous").asLong());

    HttpResponse<String> unknown = http.send(HttpRequest.newBuilder(URI.create(standIn.baseUrl()
        + "/_admin/ambiguous?operation=batches.create&count=1&failure=reset"))
        .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(400, unknown.statusCode());
    assertTrue(unknown.body().contains("batchGenerateContent"), unknown.body());
  }
}
