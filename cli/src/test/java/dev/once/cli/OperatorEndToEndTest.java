package dev.once.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.samples.InvoicePdf;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordWrites;
import dev.once.run.Mode;
import dev.once.run.RunConfig;
import dev.once.run.RunLock;
import dev.once.run.StackInfo;
import dev.once.wire.eventarc.CloudEvent;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The tool against the whole local pipeline, as {@code dev/run} runs it (the runner's own {@link RunConfig}'s
 * {@link LocalStack}, on free ports, with its lock file, which is all the tool is told): a document goes through, {@code once inspect} says it
 * was billed once, then it is re-driven twice — straight to DocumentUploaded, and as a dead-lettered finalize from
 * the hold subscription — and nothing is repeated: the ledger's records are unchanged, and the Gemini stand-in,
 * the billing entries, the results topic and the notification endpoint count what they counted before. Then its
 * analysis is invalidated on purpose ({@code once invalidate}, refused without a reason and for a live claim) and
 * re-driven: it runs exactly once more, billed once more, published and notified under the re-run's key.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorEndToEndTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Duration SETTLED = Bounds.PATIENT;

  private final List<String> progress = new ArrayList<>();
  private LocalStack stack;
  private RunLock lock;
  private Map<String, String> env;
  private Ports ports;
  private Firestore db;
  private FirestoreLedger ledger;
  private Storage gcs;
  private PubSubAdmin pubsub;
  private Blob invoice;
  private IdempotencyKey key;

  @BeforeAll
  void start() {
    Path logs = Path.of(System.getProperty("once.logDir", "target/test-run"), "operator-" + System.nanoTime())
        .toAbsolutePath();
    RunConfig config = RunConfig.of(Mode.SYNC, Ports.free(), logs);
    stack = config.stack().jars(FunctionJars.locate().check()).progress(progress::add).start();
    lock = RunLock.acquire(logs, StackInfo.of(config, ProcessHandle.current().pid(), stack)).lock();
    env = Map.of(Context.RUN_DIR, logs.toString());
    ports = config.ports();
    db = FirestoreClients.forEmulator(RunConfig.PROJECT, ports.hostPort(Part.FIRESTORE));
    ledger = new FirestoreLedger(db, LedgerOptions.defaults());
    gcs = StorageOptions.http().setHost(ports.url(Part.STORAGE)).setProjectId(RunConfig.PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
    pubsub = new PubSubAdmin(ports.hostPort(Part.PUBSUB));
  }

  @AfterAll
  void stop() throws Exception {
    pubsub.close();
    gcs.close();
    db.close();
    lock.close();
    stack.close();
  }

  private OnceRunner.Result once(String... args) {
    return OnceRunner.run(env, args);
  }

  @Test
  @Order(1)
  void aDocumentGoesThrough_andInspectSaysItWasBilledOnce() {
    invoice = gcs.create(BlobInfo.newBuilder(Topology.BUCKET, "operator/invoice.pdf").setContentType("application/pdf")
        .build(), InvoicePdf.of("OP-1"));
    key = IdempotencyKey.of("gcs:" + invoice.getBucket() + "/" + invoice.getName() + "#" + invoice.getGeneration());
    Await.until(SETTLED, () -> ledger.lookup(key, Effects.NOTIFY).map(r -> r.state() == RecordState.DONE).orElse(false),
        "the document to be analysed, published and notified");

    OnceRunner.Result inspected = once("inspect", "gs://" + invoice.getBucket() + "/" + invoice.getName() + "#"
        + invoice.getGeneration());

    assertEquals(Exit.OK, inspected.status(), inspected.all());
    for (String line : List.of("analyse       DONE      attempts 1", "publish       DONE      attempts 1",
        "notify        DONE      attempts 1", "status analysed, mode sync", "verdict: billed once")) {
      assertTrue(inspected.out().contains(line), "'" + line + "' in\n" + inspected.all());
    }
  }

  @Test
  @Order(2)
  void reDrivingTheDoneDocument_repeatsNothing() throws Exception {
    Evidence before = evidence();

    OnceRunner.Result result = once("--yes", "redrive", "gs://" + invoice.getBucket() + "/" + invoice.getName() + "#"
        + invoice.getGeneration());

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("to " + ports.url(Part.DOCUMENT_UPLOADED) + "/"), "the dev/run's function\n"
        + result.all());
    // The function answered only after handling the event: anything it repeated has happened by now.
    before.assertUnchanged(evidence());
  }

  @Test
  @Order(3)
  void reDrivingItAsADeadLetteredFinalize_repeatsNothing_andEmptiesTheHoldSubscription() throws Exception {
    Evidence before = evidence();
    String resource = get(ports.url(Part.STORAGE) + "/storage/v1/b/" + invoice.getBucket() + "/o/"
        + URLEncoder.encode(invoice.getName(), StandardCharsets.UTF_8) + "?generation=" + invoice.getGeneration());
    Map<String, String> attributes = new HashMap<>(Map.of("ce-id", "7573320909999", "ce-specversion", "1.0",
        "ce-type", CloudEvent.STORAGE_FINALIZED, "ce-source", "//storage.googleapis.com/projects/_/buckets/inbox",
        "ce-subject", "objects/" + invoice.getName(), "ce-bucket", invoice.getBucket(),
        "ce-time", JSON.readTree(resource).get("updated").asText()));
    attributes.put("CloudPubSubDeadLetterSourceSubscription", "projects/once-local/subscriptions/eventarc-finalize");
    attributes.put("CloudPubSubDeadLetterSourceDeliveryCount", "30");
    try (MessagePublisher publisher = new MessagePublisher(ports.hostPort(Part.PUBSUB))) {
      publisher.publish(Topology.topic(RunConfig.PROJECT, Topology.DEAD_LETTER_TOPIC),
          resource.getBytes(StandardCharsets.UTF_8), attributes);
    }

    OnceRunner.Result result = once("--yes", "redrive", "--dead-letter-subscription", Topology.DEAD_LETTER_HOLD);

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("POSTed to " + ports.url(Part.DOCUMENT_UPLOADED) + "/, answered 200"),
        result.all());
    assertTrue(result.out().contains("acknowledged"), result.all());
    before.assertUnchanged(evidence());
    OnceRunner.Result empty = once("--yes", "redrive", "--dead-letter-subscription", Topology.DEAD_LETTER_HOLD);
    assertEquals(Exit.NOTHING, empty.status(), "acknowledged once re-driven:\n" + empty.all());
  }

  @Test
  @Order(4)
  void stats_countTheEffectsOnTheLedger_andTheAbsorbedReDrivesInTheLogs() {
    OnceRunner.Result ledgerStats = once("stats", "--since", "1h");
    assertEquals(Exit.OK, ledgerStats.status(), ledgerStats.all());
    for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH, Effects.NOTIFY)) {
      assertTrue(ledgerStats.out().matches("(?s).*\\n  " + effect + " +1 +— +0 +0 +0 .*"), ledgerStats.all());
    }

    // One line per event, labelled with the effect that decided it: the first delivery ran analyse (and publish),
    // each re-drive was a duplicate at the publish record the sync pre-check reads.
    OnceRunner.Result logStats = once("stats", "--from", "logs");
    assertEquals(Exit.OK, logStats.status(), logStats.all());
    assertTrue(logStats.out().matches("(?s).*\\n  analyse +1 +0 +0 +0 +0 .*"), logStats.all());
    Matcher publish = Pattern.compile("\\n  publish +0 +(\\d+) ").matcher(logStats.out());
    assertTrue(publish.find(), logStats.all());
    assertTrue(Integer.parseInt(publish.group(1)) >= 2, "both re-drives absorbed as duplicates\n" + logStats.all());
  }

  @Test
  @Order(5)
  void nothingIsStuck_afterwards() {
    OnceRunner.Result result = once("stuck");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("nothing is stuck"), result.all());
  }

  @Test
  @Order(6)
  void invalidate_isRefusedWithoutAReason_andForALiveClaim_writingNothing() {
    String document = "gs://" + invoice.getBucket() + "/" + invoice.getName() + "#" + invoice.getGeneration();
    OnceRunner.Result noReason = once("invalidate", document, Effects.ANALYSE);
    assertEquals(Exit.USAGE, noReason.status(), noReason.all());
    assertTrue(noReason.err().contains("--reason"), noReason.all());
    OnceRunner.Result blank = once("invalidate", document, Effects.ANALYSE, "--reason", "  ");
    assertEquals(Exit.USAGE, blank.status(), blank.all());
    // A delivery at work: its claim is live (the ledger's lease, 60 s).
    IdempotencyKey working = IdempotencyKey.of("gcs:inbox/operator/working.pdf#1");
    assertTrue(ledger.claim(working, Effects.ANALYSE) instanceof ClaimResult.Acquired);
    OnceRunner.Result live = once("invalidate", working.value(), Effects.ANALYSE, "--reason", "re-run it");
    assertEquals(Exit.NOTHING, live.status(), live.all());
    assertTrue(live.out().contains("the claim of analyse for " + working + " is live until"), live.all());
    LedgerRecord untouched = ledger.lookup(key, Effects.ANALYSE).orElseThrow();
    assertEquals(RecordState.DONE, untouched.state(), "nothing written by a refusal");
    assertEquals(1, untouched.generation());
    assertTrue(ledger.lookup(working, Effects.ANALYSE).orElseThrow().history().isEmpty());
  }

  /**
   * The prompt was fixed: the document's analysis is invalidated on purpose, and re-driven. Gemini is called once
   * more, the document billed once more (a bill of its own, the first kept), its result published and notified once
   * more under the re-run's key, a new event to both; the run is counted as processed; a further re-drive repeats
   * nothing; once inspect shows the history.
   */
  @Test
  @Order(7)
  void invalidate_runsTheAnalysisExactlyOnceMore_billedOnceMore_publishedAndNotifiedUnderANewKey() throws Exception {
    String document = "gs://" + invoice.getBucket() + "/" + invoice.getName() + "#" + invoice.getGeneration();
    IdempotencyKey rerun = key.rerun(2);
    long calls = stack.gemini().count("generateContent");
    pubsub.pull(Topology.subscription(RunConfig.PROJECT, Topology.RESULTS_TAP)); // what came before
    long notifiedBefore = notifications(key.value());

    OnceRunner.Result invalidated = once("--yes", "invalidate", document, Effects.ANALYSE, "--reason",
        "prompt fixed: VAT");

    assertEquals(Exit.OK, invalidated.status(), invalidated.all());
    assertTrue(invalidated.out().contains("analyse: run 1 (DONE, 1 attempt) kept in its history; run 2 waits"),
        invalidated.all());
    assertTrue(invalidated.out().contains("publish: run 1 (DONE, 1 attempt) kept in its history"), invalidated.all());
    assertTrue(invalidated.out().contains("carries the key " + rerun), invalidated.all());
    OnceRunner.Result stuck = once("stuck");
    assertTrue(stuck.out().contains("run 2 to come: invalidated by " + Operator.localUser() + ": prompt fixed: VAT"),
        stuck.all());

    // The instance that analysed the document knows it finished (its cache, 10 minutes): the platform's next
    // instance is a new one, as after a scale-down.
    stack.restartWith(Part.DOCUMENT_UPLOADED, List.of());
    OnceRunner.Result redriven = once("--yes", "redrive", document);
    assertEquals(Exit.OK, redriven.status(), redriven.all());
    Await.until(SETTLED, () -> ledger.lookup(rerun, Effects.NOTIFY).map(r -> r.state() == RecordState.DONE)
        .orElse(false), "the re-run's result notified");

    assertEquals(calls + 1, stack.gemini().count("generateContent"), "Gemini called exactly once more");
    List<QueryDocumentSnapshot> bills = db.collection(RecordWrites.BILLING)
        .whereEqualTo("key", key.value()).get().get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS).getDocuments();
    assertEquals(2, bills.size(), "both bills kept");
    assertEquals(1, bills.stream().filter(b -> Long.valueOf(2).equals(b.getLong(RecordWrites.RERUN))).count(),
        "the re-run's bill, of its own");
    List<PubsubMessage> results = pubsub.pull(Topology.subscription(RunConfig.PROJECT,
        Topology.RESULTS_TAP));
    assertEquals(1, results.size(), "one result published: " + results);
    assertEquals(rerun.value(), results.get(0).getAttributesMap().get("idempotency_key"));
    JsonNode message = JSON.readTree(results.get(0).getData().toByteArray());
    assertEquals(key.value(), message.path("key").asText(), "the result still names its document");
    assertEquals(2, message.path("rerun").asInt());
    assertEquals(1, notifications(rerun.value()), "notified once under the new key");
    assertEquals(notifiedBefore, notifications(key.value()), "nothing under the old key");
    LedgerRecord analyse = ledger.lookup(key, Effects.ANALYSE).orElseThrow();
    assertEquals(RecordState.DONE, analyse.state());
    assertEquals(2, analyse.generation());
    assertEquals(1, analyse.attempts(), "the re-run's one try");
    assertEquals(Operator.localUser(), analyse.history().get(0).by(), "the authenticated account");
    assertEquals(2, ledger.lookup(key, Effects.PUBLISH).orElseThrow().generation());

    Evidence after = evidence();
    OnceRunner.Result again = once("--yes", "redrive", document);
    assertEquals(Exit.OK, again.status(), again.all());
    assertEquals(calls + 1, stack.gemini().count("generateContent"), "once more, not twice");
    assertEquals(after.bills(), evidence().bills());
    assertEquals(0, pubsub.pull(Topology.subscription(RunConfig.PROJECT, Topology.RESULTS_TAP)).stream()
        .filter(m -> m.getAttributesMap().get("idempotency_key").startsWith(key.value())).count());

    OnceRunner.Result inspected = once("inspect", document);
    for (String line : List.of("analyse       DONE      attempts 1", ", run 2", "run 1 DONE after 1 attempt",
        "invalidated by " + Operator.localUser() + " at", "prompt fixed: VAT", "run 2 (invalidated on purpose)",
        "verdict: billed once per run (2 runs, 1 on purpose")) {
      assertTrue(inspected.out().contains(line), "'" + line + "' in\n" + inspected.all());
    }
    // The re-run is a processed analysis, not a duplicate: two processed analyse lines in all.
    OnceRunner.Result logStats = once("stats", "--from", "logs");
    assertTrue(logStats.out().matches("(?s).*\\n  analyse +2 +0 +0 +0 +0 .*"), logStats.all());
  }

  /** Notification requests that carried {@code idempotencyKey} (failed tries included). */
  private long notifications(String idempotencyKey) throws Exception {
    long n = 0;
    for (JsonNode request : JSON.readTree(get(ports.url(Part.NOTIFY) + "/_admin/received"))) {
      n += idempotencyKey.equals(request.path("headers").path("idempotency-key").asText()) ? 1 : 0;
    }
    return n;
  }

  /** What the document's effects left behind, counted at their destinations. */
  private record Evidence(Map<String, Optional<LedgerRecord>> records, JsonNode geminiCounters, int bills,
      long notifications, int results) {
    void assertUnchanged(Evidence after) {
      for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH, Effects.NOTIFY)) {
        LedgerRecord was = records.get(effect).orElseThrow();
        LedgerRecord is = after.records.get(effect).orElseThrow();
        assertEquals(RecordState.DONE, is.state(), effect);
        assertEquals(was.attempts(), is.attempts(), effect + " attempts");
        assertEquals(was.token(), is.token(), effect + " token");
        assertEquals(was.updatedAt(), is.updatedAt(), effect + " not written again");
      }
      assertEquals(geminiCounters, after.geminiCounters, "no Gemini call");
      assertEquals(1, after.bills, "billed once");
      assertEquals(notifications, after.notifications, "notified once");
      assertEquals(0, after.results, "nothing published again");
    }
  }

  private Evidence evidence() throws Exception {
    Map<String, Optional<LedgerRecord>> records = new HashMap<>();
    for (String effect : List.of(Effects.ANALYSE, Effects.PUBLISH, Effects.NOTIFY)) {
      records.put(effect, ledger.lookup(key, effect));
    }
    int bills = db.collection(RecordWrites.BILLING).whereEqualTo("key", key.value()).get()
        .get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS).size();
    long notifications = 0;
    for (JsonNode n : JSON.readTree(get(ports.url(Part.NOTIFY) + "/_admin/received"))) {
      notifications += key.value().equals(n.path("headers").path("idempotency-key").asText()) ? 1 : 0;
    }
    // The tap holds every result since the last pull: after the first pull, only what was published since.
    int results = (int) pubsub.pull(Topology.subscription(RunConfig.PROJECT, Topology.RESULTS_TAP)).stream()
        .filter(m -> key.value().equals(m.getAttributesMap().get("idempotency_key"))).count();
    return new Evidence(records, JSON.readTree(get(ports.url(Part.GEMINI) + "/_admin/counters")), bills,
        notifications, results);
  }

  private static String get(String url) throws Exception {
    HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Bounds.CALL)
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), url + ": " + response.body());
    return response.body();
  }
}
