package dev.once.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.Json;
import dev.once.local.http.Receiver;
import dev.once.local.storage.StorageStandIn;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The three stand-ins started the way the local runner will start them: separate JVMs, wired by URL only.
 * A storage upload in one process becomes a CloudEvent POST from the relay in another; a batch in the Gemini
 * process ends on its own ticker and sends its webhook.
 */
class StandInProcessTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Path LOGS = Path.of("target", "standins");

  /** One stand-in JVM; its output goes to a log file, from which the READY line is read. */
  record Running(Process process, String baseUrl) implements AutoCloseable {
    static Running start(Class<?> main, String... args) throws IOException {
      Files.createDirectories(LOGS);
      Path log = LOGS.resolve(main.getSimpleName() + "-" + System.nanoTime() + ".log");
      List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-cp", System.getProperty("java.class.path"), main.getName()));
      command.addAll(List.of(args));
      Process process = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
      String url = Await.value(Duration.ofSeconds(30), () -> readyUrl(log, process),
          main.getSimpleName() + " to print READY (see " + log + ")");
      return new Running(process, url);
    }

    private static Optional<String> readyUrl(Path log, Process process) {
      if (!process.isAlive()) {
        throw new AssertionError("the stand-in exited with " + process.exitValue() + "; see " + log);
      }
      try {
        return Files.readAllLines(log).stream().filter(l -> l.startsWith("READY ")).findFirst()
            .map(l -> l.substring(l.lastIndexOf(' ') + 1));
      } catch (IOException e) {
        return Optional.empty();
      }
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }

  private static HttpResponse<String> send(String method, String url, String body, String... headers)
      throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static long adminCounter(Running standIn, String name) {
    try {
      JsonNode counters = Json.parseTrusted(send("GET", standIn.baseUrl() + "/_admin/counters", null).body());
      return counters.path(name).asLong(0);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void storageAndRelayProcesses_deliverAFinalizeEventToAFunctionUrl() throws Exception {
    try (Receiver function = Receiver.start();
        Running relay = Running.start(EventarcRelay.class, "--port", "0", "--route",
            "storage=" + function.url("/fn"), "--max-attempts", "3");
        Running storage = Running.start(StorageStandIn.class, "--port=0", "--notify-url",
            relay.baseUrl() + "/_ingest/storage")) {
      HttpResponse<String> upload = send("POST", storage.baseUrl()
          + "/upload/storage/v1/b/docs/o?uploadType=media&name=in%2Fa.pdf", "%PDF", "Content-Type", "application/pdf");
      assertEquals(200, upload.statusCode(), upload.body());

      Receiver.Received event = Await.value(Duration.ofSeconds(20),
          () -> function.receivedOn("/fn").stream().findFirst(), "the finalize CloudEvent");
      assertEquals("google.cloud.storage.object.v1.finalized", event.header("ce-type"));
      assertEquals("objects/in/a.pdf", event.header("ce-subject"));
      assertEquals(Json.parseTrusted(upload.body()).get("generation").asText(),
          Json.parseTrusted(event.text()).get("generation").asText());
      // The function has the event before the relay has its answer: wait for the relay's count.
      Await.until(Duration.ofSeconds(10), () -> adminCounter(relay, "delivered") == 1, "the relay to count it");
    }
  }

  @Test
  void geminiProcess_endsABatchOnItsTicker_andSendsTheWebhook() throws Exception {
    try (Receiver hooks = Receiver.start();
        Running gemini = Running.start(GeminiStandIn.class, "--port", "0", "--api-key", "k", "--tick", "100ms",
            "--webhook-url", hooks.url("/hook").toString(), "--webhook-secret",
            "whsec_" + java.util.Base64.getEncoder().encodeToString("local-test-key".getBytes()))) {
      HttpResponse<String> created = send("POST", gemini.baseUrl() + "/v1beta/models/gemini-2.5-flash:batchGenerateContent",
          "{\"batch\":{\"inputConfig\":{\"requests\":{\"requests\":[{\"request\":{\"contents\":[{\"parts\":"
              + "[{\"text\":\"hi\"}]}]}}]}}}}", "x-goog-api-key", "k", "Content-Type", "application/json");
      assertEquals(200, created.statusCode(), created.body());
      String name = Json.parseTrusted(created.body()).get("name").asText();

      Receiver.Received hook = Await.value(Duration.ofSeconds(20),
          () -> hooks.receivedOn("/hook").stream().findFirst(), "the batch webhook");
      assertEquals(name, Json.parseTrusted(hook.text()).get("data").get("id").asText());
      assertTrue(dev.once.local.gemini.WebhookSigner.fromSecret("whsec_"
          + java.util.Base64.getEncoder().encodeToString("local-test-key".getBytes()))
          .verify(hook.header("webhook-id"), hook.header("webhook-timestamp"), hook.body(),
              hook.header("webhook-signature")));
      assertEquals(1, adminCounter(gemini, "batchGenerateContent"));
      Await.until(Duration.ofSeconds(10), () -> adminCounter(gemini, "webhook.delivered") == 1,
          "the webhook to be counted");
    }
  }

  @Test
  void aBadOption_stopsTheProcessWithUsage() throws Exception {
    Files.createDirectories(LOGS);
    Path log = LOGS.resolve("bad-option-" + System.nanoTime() + ".log");
    Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        System.getProperty("java.class.path"), StorageStandIn.class.getName(), "--prot", "1")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    assertTrue(process.waitFor(30, TimeUnit.SECONDS));
    assertEquals(2, process.exitValue());
    assertTrue(Files.readString(log).contains("unknown option --prot"));
  }
}
