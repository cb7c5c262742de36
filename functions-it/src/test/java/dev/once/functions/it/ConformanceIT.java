package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.config.OnceSetting;
import dev.once.key.IdempotencyKey;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FreePort;
import dev.once.local.eventarc.BinaryMode;
import dev.once.local.http.Receiver;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.ChildProcess;
import dev.once.testing.GoogleSamples;
import dev.once.wire.eventarc.CloudEvent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Google's own sample events (once-testing's GoogleSamples, sources in their README) through the real entry
 * points under the invoker, in binary mode with the ce-* headers Eventarc sets. Each gets its documented answer,
 * read from the functions' log lines, the ledger, the analyses, the results topic and the notification endpoint;
 * none is refused as malformed.
 */
class ConformanceIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private static final AtomicInteger LEDGERS = new AtomicInteger();
  /** The ledger MessageDelivered writes to now, and the message ids delivered to it. */
  private static String ledger = OnceSetting.ONCE_COLLECTION.defaultValue();
  private static final Set<String> DELIVERED = new HashSet<>();
  /** The effects of a document refused before any paid call: the refusal recorded, then published. */
  private static final String REFUSED = "{\"analyse\":\"rejected\",\"publish\":\"processed\"}";
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // Its own stack: Pub/Sub samples of the same message id restart MessageDelivered with ledgers of their own.
    stack = PipelineStack.start(PipelineStack.Config.sync());
  }

  @AfterAll
  static void stop() {
    if (stack != null) {
      stack.close();
    }
  }

  // ---- Cloud Storage: every sample names a content type the pipeline does not accept (docs/FUNCTIONS.md). ----

  @Test
  void storageObjectDataComplex_numbersForInt64sAndEveryOptionalField_isRefusedForItsContentType() throws Exception {
    JsonNode data = read("storage/StorageObjectData-complex.json");
    CloudEvent event = storageEvent("7000000000000001", data, bytes("storage/StorageObjectData-complex.json"));
    assertStorageSampleRefused(event, "gcs:sample-bucket/MyFile#96883251", REFUSED,
        "content type \"esse commodo\" is not accepted");
  }

  /**
   * StorageObjectDataWorkflows-simple.json, then the structured CloudEvent Workflows receives for the same object
   * (StorageObjectDataWorkflows-simple), sent as Eventarc sends it to a function, its attributes as ce-* headers:
   * the first is refused for its content type, the second finds that refusal already published.
   */
  @Test
  void storageObjectDataWorkflowsSimple_isRefusedForItsContentType_andItsCloudEventFindsThatRefusal() throws Exception {
    String key = "gcs:my-bucket/my-file.txt#1637874272256630";
    String reason = "content type \"text/plain\" is not accepted";
    JsonNode data = read("storage/StorageObjectDataWorkflows-simple.json");
    assertStorageSampleRefused(storageEvent("7000000000000002", data,
        bytes("storage/StorageObjectDataWorkflows-simple.json")), key, REFUSED, reason);

    JsonNode structured = read("storage/StorageObjectDataWorkflows-simple");
    CloudEvent event = new CloudEvent(structured.path("id").asText(), structured.path("source").asText(),
        structured.path("type").asText(), structured.path("subject").asText(),
        Instant.parse(structured.path("time").asText()), structured.path("datacontenttype").asText(),
        JSON.writeValueAsBytes(structured.path("data")), Map.of("bucket", structured.path("bucket").asText()));
    assertStorageSampleRefused(event, key, "{\"publish\":\"duplicate\"}", reason);
  }

  // ---- Pub/Sub: every sample is a message to notify. ----

  @Test
  void messagePublishedDataBinary_isNotified() throws Exception {
    assertPubSubSampleNotified(read("pubsub/MessagePublishedData-binary.json"));
  }

  @Test
  void messagePublishedDataDuplicatedFields_theSnakeCaseTwins_isNotified() throws Exception {
    assertPubSubSampleNotified(read("pubsub/MessagePublishedData-duplicatedFields.json"));
  }

  @Test
  void messagePublishedDataText_withAttributes_isNotified() throws Exception {
    assertPubSubSampleNotified(read("pubsub/MessagePublishedData-text.json"));
  }

  /** The file holds a bare PubsubMessage: delivered as the message of the envelope Eventarc always sends. */
  @Test
  void messagePublishedDataSimple_aBareMessage_inTheEnvelope_isNotified() throws Exception {
    ObjectNode envelope = JSON.createObjectNode();
    envelope.set("message", read("pubsub/MessagePublishedData-simple.json"));
    envelope.put("subscription", "projects/my-project/subscriptions/my-subscription");
    assertPubSubSampleNotified(envelope);
  }

  /**
   * The delivery captured from Eventarc (google-cloudevents issue 151), its headers included: as captured, without the
   * pipeline's signature, it is refused and claims nothing; with the attributes the pipeline adds to each result,
   * delivered twice, it is notified exactly once.
   */
  @Test
  void capturedEventarcDelivery_unsignedIsRefused_signedAndDeliveredTwice_isNotifiedExactlyOnce() throws Exception {
    JsonNode captured = read("pubsub/google-cloudevents-issue-151.headers.json");
    ObjectNode data = (ObjectNode) read("pubsub/google-cloudevents-issue-151.json");
    // The capture redacted the project in ce-source (brackets are not valid in a URI); the subscription names it.
    String source = captured.path("ce-source").asText().replace("[redacted]", "kevmoo-firebase3-test");
    String key = "pubsub:1981947010177954";
    String ledger = ledgerWithout(key);
    int before = stack.notifiedWith(key).size();
    CloudEvent unsigned = new CloudEvent(captured.path("ce-id").asText() + "-unsigned", source,
        captured.path("ce-type").asText(), null, Instant.parse(captured.path("ce-time").asText()),
        captured.path("content-type").asText(), bytes("pubsub/google-cloudevents-issue-151.json"), Map.of());

    List<JsonNode> refused = deliver("MessageDelivered", unsigned);
    assertEquals("rejected", refused.get(0).path("outcome").asText(), refused.toString());
    assertTrue(refused.get(0).path("reason").asText().contains("not a result of this pipeline"), refused.toString());
    assertTrue(withKey(stack.documents(ledger), key).isEmpty(), "the unsigned message claimed nothing");

    data.set("message", stack.signedAsResult(data.path("message"), key));
    CloudEvent event = new CloudEvent(captured.path("ce-id").asText(), source, captured.path("ce-type").asText(), null,
        Instant.parse(captured.path("ce-time").asText()), captured.path("content-type").asText(),
        JSON.writeValueAsBytes(data), Map.of());
    List<JsonNode> first = deliver("MessageDelivered", event);
    List<JsonNode> second = deliver("MessageDelivered", event);

    assertEquals(List.of("processed"), outcomes(first, key));
    assertEquals(List.of("duplicate"), outcomes(second, key));
    assertEquals(before + 1, stack.notifiedWith(key).size(), "notified exactly once");
    assertNotification(key, data.path("message"));
    assertLedger(ledger, key, "notify", "DONE");
  }

  // ---- mvn function:run (docs/LOCAL.md): Google's plugin serves one function of this module, same settings ----

  /**
   * The command of docs/LOCAL.md, run as a user runs it: the library and the stand-ins installed in the local Maven
   * repository (here from the jars this build made, which running tests must not see rebuilt), then {@code mvn -pl functions function:run}
   * with the deployed function's environment. A real-shape Pub/Sub event, delivered twice, notifies once.
   */
  @Test
  void mvnFunctionRun_servesMessageDelivered_configuredByTheEnvironment() throws Exception {
    Path root = Path.of("..").toAbsolutePath().normalize();
    Path log = stack.logDir.resolve("function-run.log");
    Files.createDirectories(log.getParent());
    maven(root, log, List.of("-N", "install"));
    // What its install step puts there: the library, and the stand-ins and the test kit functions' tests depend on
    // (the plugin resolves the module's test scope too). Nothing of this project is assumed to be there already.
    for (String module : List.of("wire", "core", "firestore", "local", "testing")) {
      installBuiltJar(root, log, module);
    }

    int port = FreePort.pick();
    String ledger = "conformance-function-run";
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("ONCE_COLLECTION", ledger);
    Process run = mavenProcess(root, log, env, List.of("-pl", "functions", "function:run",
        "-Drun.functionTarget=dev.once.functions.MessageDelivered", "-Drun.port=" + port));
    try {
      // A Maven JVM resolving the build and starting the invoker beside three forks: minutes at a load of 30; its
      // exit ends the wait at once.
      Await.until(Bounds.START, () -> ChildProcess.listening(port) || !run.isAlive(),
          "mvn function:run to listen on " + port);
      assertTrue(run.isAlive(), "mvn function:run exited; see " + log);
      String messageId = "7" + System.nanoTime();
      ObjectNode data = (ObjectNode) read("pubsub/google-cloudevents-issue-151.json");
      ((ObjectNode) data.path("message")).put("messageId", messageId).put("message_id", messageId);
      data.set("message", stack.signedAsResult(data.path("message"), "pubsub:" + messageId));
      CloudEvent event = new CloudEvent(messageId, "//pubsub.googleapis.com/projects/" + stack.project
          + "/topics/results", CloudEvent.PUBSUB_PUBLISHED, null, Instant.now(), "application/json",
          JSON.writeValueAsBytes(data), Map.of());
      String key = "pubsub:" + messageId;
      URI url = URI.create("http://127.0.0.1:" + port + "/");
      for (int delivery = 0; delivery < 2; delivery++) {
        HttpResponse<String> answer = HTTP.send(BinaryMode.request(event, url, Bounds.CALL),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(2, answer.statusCode() / 100, answer.body());
      }
      assertEquals(1, stack.notifiedWith(key).size(), "notified once");
      assertNotification(key, data.path("message"));
      assertLedger(ledger, key, "notify", "DONE");
      String output = Files.readString(log);
      String keyHash = IdempotencyKey.logHash(key); // lines name the key by hash only
      assertTrue(output.contains("\"message\":\"MessageDelivered processed " + keyHash + "\""), "logged as processed");
      assertTrue(output.contains("\"message\":\"MessageDelivered duplicate " + keyHash + "\""), "logged as duplicate");
    } finally {
      run.descendants().forEach(ChildProcess::stop);
      ChildProcess.stop(run.toHandle());
    }
  }

  /** Installs the jar this build made for {@code module} (once-MODULE), without rebuilding it. */
  private static void installBuiltJar(Path root, Path log, String module) throws Exception {
    Path jar;
    try (var jars = Files.list(root.resolve(module + "/target"))) {
      jar = jars.filter(f -> f.getFileName().toString().matches("once-" + module + "-[^-]+(-SNAPSHOT)?\\.jar"))
          .findFirst().orElseThrow(() -> new AssertionError(module + "/target holds no once-" + module + " jar"));
    }
    maven(root, log,
        List.of("install:install-file", "-Dfile=" + jar, "-DpomFile=" + root.resolve(module + "/pom.xml")));
  }

  private static void maven(Path root, Path log, List<String> args) throws Exception {
    Process process = mavenProcess(root, log, Map.of(), args);
    if (!process.waitFor(Bounds.START.toMinutes(), TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("mvn " + args + " did not finish; see " + log);
    }
    assertEquals(0, process.exitValue(), "mvn " + args + "; see " + log);
  }

  private static Process mavenProcess(Path root, Path log, Map<String, String> env, List<String> args)
      throws IOException {
    List<String> command = new ArrayList<>(List.of("mvn", "-B", "-ntp"));
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(env);
    return builder.start();
  }

  // ---- how each sample is sent and judged ----

  /** What Eventarc makes of a finalize notification whose data is {@code body}. */
  private static CloudEvent storageEvent(String id, JsonNode data, byte[] body) {
    String bucket = data.path("bucket").asText();
    return new CloudEvent(id, "//storage.googleapis.com/projects/_/buckets/" + bucket, CloudEvent.STORAGE_FINALIZED,
        "objects/" + data.path("name").asText(), Instant.parse(data.path("updated").asText()), "application/json",
        body, Map.of("bucket", bucket));
  }

  /** One log line naming the key (not a malformed event's) with these effects; one refusal recorded and published. */
  private static void assertStorageSampleRefused(CloudEvent event, String key, String effects, String reason)
      throws Exception {
    List<JsonNode> lines = deliver("DocumentUploaded", event);
    assertEquals(1, lines.size(), "one log line for event " + event.id() + ": " + lines);
    JsonNode line = lines.get(0);
    assertTrue(EventLines.isAbout(line, key), "not refused as malformed: " + line);
    assertEquals(event.id(), line.path("eventId").asText());
    assertEquals(JSON.readTree(effects), line.path("effects"), line.toString());

    List<QueryDocumentSnapshot> analyses = withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size(), "one analysis record for " + key);
    assertEquals("rejected", analyses.get(0).getString("status"));
    assertTrue(analyses.get(0).getString("reason").contains(reason), analyses.get(0).getString("reason"));
    assertTrue(withKey(stack.documents("billing"), key).isEmpty(), "nothing billed");
    assertLedger("idempotency", key, "analyse", "REJECTED");
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1, "the refusal of " + key + " notified");
    assertEquals(1, attributed(stack.published(), key).size(), "the refusal published once");
  }

  /**
   * Delivers a Pub/Sub sample as Eventarc would (ce-id the message id, ce-time its publish time), with the attributes
   * the pipeline adds to each result (its key, the sample's own, and its signature), to a MessageDelivered whose
   * ledger holds no record of its key: three samples share the message id "message-id" for different messages, which
   * no topic does.
   */
  private static void assertPubSubSampleNotified(JsonNode sample) throws Exception {
    String messageId = sample.path("message").path("messageId").asText();
    String key = "pubsub:" + messageId;
    ObjectNode data = sample.deepCopy();
    data.set("message", stack.signedAsResult(sample.path("message"), key));
    JsonNode message = data.path("message");
    String project = data.path("subscription").asText().split("/")[1];
    CloudEvent event = new CloudEvent(messageId, "//pubsub.googleapis.com/projects/" + project + "/topics/my-topic",
        CloudEvent.PUBSUB_PUBLISHED, null,
        message.has("publishTime") ? Instant.parse(message.path("publishTime").asText()) : Instant.now(),
        "application/json", JSON.writeValueAsBytes(data), Map.of());
    String ledger = ledgerWithout(key);
    int before = stack.notifiedWith(key).size();

    List<JsonNode> lines = deliver("MessageDelivered", event);

    assertEquals(List.of("processed"), outcomes(lines, key), "not refused as malformed: " + lines);
    assertEquals(JSON.readTree("{\"notify\":\"processed\"}"), lines.get(0).path("effects"));
    assertEquals(before + 1, stack.notifiedWith(key).size(), "notified once");
    assertNotification(key, message);
    assertLedger(ledger, key, "notify", "DONE");
  }

  /**
   * The ledger MessageDelivered writes to, once none of its records is {@code key}'s: else MessageDelivered restarts
   * with a ledger of its own (a restart, not a cleared record, as an instance also remembers the keys it settled).
   */
  private static String ledgerWithout(String key) {
    if (!DELIVERED.add(key)) {
      ledger = "conformance-" + LEDGERS.incrementAndGet();
      stack.restartWithEnv("MessageDelivered", Map.of("ONCE_COLLECTION", ledger));
      DELIVERED.clear();
      DELIVERED.add(key);
    }
    return ledger;
  }

  /** The latest notification for {@code key} carries the key and the message's data (base64: none is JSON). */
  private static void assertNotification(String key, JsonNode message) throws IOException {
    List<Receiver.Received> notified = stack.notifiedWith(key);
    JsonNode body = JSON.readTree(notified.get(notified.size() - 1).body());
    assertEquals(key, body.path("idempotencyKey").asText());
    assertTrue(body.path("messageId").isMissingNode(), "no message id: copies of a result get the same body " + body);
    assertEquals(message.path("data").asText(), body.path("data").asText(), body.toString());
  }

  private static void assertLedger(String collection, String key, String effect, String state) {
    List<QueryDocumentSnapshot> records = withKey(stack.documents(collection), key).stream()
        .filter(r -> effect.equals(r.getString("effect"))).toList();
    assertEquals(1, records.size(), "one " + effect + " record of " + key + " in " + collection);
    assertEquals(state, records.get(0).getString("state"));
  }

  private static List<String> outcomes(List<JsonNode> lines, String key) {
    List<String> outcomes = new ArrayList<>();
    for (JsonNode line : lines) {
      assertTrue(EventLines.isAbout(line, key), "not refused as malformed: " + line);
      outcomes.add(line.path("outcome").asText());
    }
    return outcomes;
  }

  /**
   * POSTs the event in binary mode; the function must acknowledge it (2xx). Returns the per-event log lines the
   * function wrote for it (every entry point logs one line per event before it answers).
   */
  private static List<JsonNode> deliver(String function, CloudEvent event) throws Exception {
    FunctionProcess process = stack.function(function);
    long mark = Files.size(process.log());
    HttpResponse<String> response = HTTP.send(BinaryMode.request(event, process.url(), Bounds.CALL),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(2, response.statusCode() / 100, function + " acknowledges " + event + ": " + response.body());
    // Only this event's lines: the relay may deliver another test's result to the same function meanwhile.
    return Await.value(DEADLINE, () -> {
      List<JsonNode> lines = EventLines.of(process.log(), mark, function).stream()
          .filter(line -> event.id().equals(line.path("eventId").asText())).toList();
      return lines.isEmpty() ? Optional.empty() : Optional.of(lines);
    }, "the log line of " + event);
  }

  /** Google's sample, as once-testing keeps it. */
  private static byte[] bytes(String file) {
    return GoogleSamples.read(file);
  }

  private static JsonNode read(String file) throws IOException {
    return JSON.readTree(GoogleSamples.read(file));
  }
}
