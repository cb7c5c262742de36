package dev.once.cli.redrive;

import static dev.once.pipeline.DocumentStatus.ANALYSED;
import static dev.once.pipeline.DocumentStatus.REJECTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.NoCredentials;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.cli.CliFirestore;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.SideWrites;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.eventarc.DirectSender;
import dev.once.local.http.Receiver;
import dev.once.local.storage.StorageStandIn;
import dev.once.pipeline.Effects;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordWrites;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.storage.ObjectFinalized;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code once redrive} against the Cloud Storage stand-in, a recording function endpoint and the Pub/Sub emulator:
 * the event it sends is the one the Eventarc relay makes of the same object, and dead letters are re-driven,
 * acknowledged only once accepted, or left where they are.
 */
class RedriveCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PROJECT = "once-cli-test";

  private StorageStandIn storage;
  private Storage gcs;
  private Receiver function;
  private Blob invoice;

  @BeforeEach
  void start() {
    CliFirestore.clear();
    storage = StorageStandIn.start();
    storage.createBucket("inbox");
    gcs = StorageOptions.http().setHost(storage.baseUrl()).setProjectId(PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
    invoice = gcs.create(BlobInfo.newBuilder("inbox", "in box/invoice 1.pdf").setContentType("application/pdf").build(),
        "%PDF-1.4 an invoice".getBytes(StandardCharsets.UTF_8));
    function = Receiver.start();
  }

  @AfterEach
  void stop() throws Exception {
    function.close();
    gcs.close();
    storage.close();
  }

  private Map<String, String> env() {
    Map<String, String> env = new HashMap<>(CliFirestore.env());
    env.put("STORAGE_EMULATOR_HOST", storage.baseUrl());
    return env;
  }

  private String object() {
    return "gs://inbox/" + invoice.getName() + "#" + invoice.getGeneration();
  }

  @Test
  void theEventSent_isTheOneEventarcMakesOfTheObject_butForItsId() throws Exception {
    OnceRunner.Result result =
        OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString());

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("key gcs:inbox/in box/invoice 1.pdf#" + invoice.getGeneration()), result.all());
    assertEquals(1, function.received().size());
    Receiver.Received sent = function.received().get(0);
    ObjectFinalized notification = storage.notifications().get(storage.notifications().size() - 1);
    CloudEvent eventarc = DirectSender.finalized(notification);
    assertTrue(sent.header("ce-id").matches("\\d{16}"), sent.header("ce-id"));
    assertEquals("1.0", sent.header("ce-specversion"));
    assertEquals(eventarc.type(), sent.header("ce-type"));
    assertEquals(eventarc.source(), sent.header("ce-source"));
    assertEquals("objects/in box/invoice 1.pdf", sent.header("ce-subject"));
    assertEquals("inbox", sent.header("ce-bucket"));
    assertEquals(eventarc.time().toString(), sent.header("ce-time"));
    assertEquals("application/json", sent.header("content-type"));
    assertEquals(JSON.readTree(notification.objectJson()), JSON.readTree(sent.body()), "the object resource, as is");
    assertEquals(null, sent.header("authorization"));
  }

  /**
   * The ledger's records expire ONCE_RETENTION_DAYS after their last write, the analysis and its bill do not:
   * DocumentUploaded, which trusts the ledger alone, would pay for the document again.
   */
  @Test
  void aFinishedDocumentWhoseLedgerRecordExpired_isRefused_unlessForced() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/" + invoice.getName() + "#" + invoice.getGeneration());
    CliFirestore.put(RecordWrites.ANALYSES, key.documentId(), Map.of("key", key.value(), "status", ANALYSED.value(),
        "mode", "sync"));

    OnceRunner.Result refused =
        OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString());

    assertEquals(Exit.NOTHING, refused.status(), refused.all());
    assertEquals(1, refused.err().strip().lines().count(), refused.all());
    assertTrue(refused.err().contains("refused: " + object() + " is analysed (analyses/" + key.documentId()
        + ") but its ledger record has expired"), refused.all());
    assertTrue(function.received().isEmpty(), "nothing sent");

    OnceRunner.Result forced = OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString(),
        "--force");
    assertEquals(Exit.OK, forced.status(), forced.all());
    assertEquals(1, function.received().size());
  }

  /** With its ledger record there, a re-drive of finished work is absorbed by the ledger: it is sent. */
  @Test
  void aFinishedDocumentTheLedgerStillHolds_isRedriven() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/" + invoice.getName() + "#" + invoice.getGeneration());
    FirestoreLedger ledger = CliFirestore.ledger();
    ledger.complete(((ClaimResult.Acquired) ledger.claim(key, Effects.ANALYSE, "fp")).claim(), Map.of("mode", "sync"),
        SideWrites.NONE);
    CliFirestore.put(RecordWrites.ANALYSES, key.documentId(), Map.of("key", key.value(), "status", REJECTED.value()));

    OnceRunner.Result result =
        OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString());

    assertEquals(Exit.OK, result.status(), result.all());
    assertEquals(1, function.received().size());
  }

  /**
   * No identity token on the command line, none to this machine's functions, and never over plain http to another
   * host: a deployed function gets one over https, minted for its audience.
   */
  @Test
  void identityTokens_neverComeFromTheCommandLine_norGoOverHttp() {
    assertEquals(Exit.USAGE, OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString(),
        "--id-token", "eyJ.token").status(), "--id-token is not an option");
    OnceRunner.Result local = OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString());
    assertEquals(Exit.OK, local.status(), local.all());
    assertEquals(null, function.received().get(0).header("authorization"), "no token to a function on this machine");

    OnceRunner.Result plain = OnceRunner.run(Map.of("GOOGLE_CLOUD_PROJECT", "p"), "--yes", "redrive", object(), "--to",
        "http://document-uploaded.example.com/");
    assertEquals(Exit.USAGE, plain.status(), plain.all());
    assertTrue(plain.err().contains("is not https"), plain.all());
    assertEquals("https://europe-west1-p.cloudfunctions.net",
        IdentityTokens.audience(URI.create("https://europe-west1-p.cloudfunctions.net/once-document-uploaded")));
  }

  @Test
  void aGenerationThatNoLongerExists_isNothingToRedrive() {
    OnceRunner.Result result = OnceRunner.run(env(), "--yes", "redrive", "gs://inbox/invoice.pdf#12345", "--to",
        function.url("/").toString());
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("does not exist in the Cloud Storage stand-in"), result.all());
    assertTrue(function.received().isEmpty());
  }

  @Test
  void aRefusal_orNoAnswerInTime_isExit3_sayingARetryIsSafe() {
    function.answerNext(500);
    OnceRunner.Result refused =
        OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString());
    assertEquals(Exit.REMOTE, refused.status(), refused.all());
    assertTrue(refused.err().contains("answered 500"), refused.all());
    assertTrue(refused.err().contains("the ledger makes it safe"), refused.all());

    function.stallNext(Duration.ofSeconds(20));
    OnceRunner.Result late = OnceRunner.run(env(), "--yes", "redrive", object(), "--to", function.url("/").toString(),
        "--timeout", "1s");
    assertEquals(Exit.REMOTE, late.status(), late.all());
    assertTrue(late.err().contains("no answer from " + function.url("/") + " within 1 s: the function may still be"
        + " running the event"), late.all());
    assertEquals(2, function.received().size(), "both arrived");
  }

  @Test
  void usageErrors_areExit64() {
    assertEquals(Exit.USAGE,
        OnceRunner.run(env(), "--yes", "redrive", "inbox/invoice.pdf", "--to", "http://x/").status());
    assertEquals(Exit.USAGE, OnceRunner.run(env(), "--yes", "redrive", object(), "--to", "not a url").status());
    assertEquals(Exit.USAGE, OnceRunner.run(env(), "redrive").status());
    assertEquals(Exit.USAGE,
        OnceRunner.run(env(), "--yes", "redrive", object(), "--dead-letter-subscription", "hold").status());
    assertEquals(Exit.USAGE, OnceRunner.run(Map.of("GOOGLE_CLOUD_PROJECT", "p"), "redrive", object()).status(),
        "no --to against a deployed project");
  }

  /** Dead letters on the Pub/Sub emulator: one of each kind the pipeline's hold subscription can hold. */
  @Test
  void deadLetters_areRedrivenAndAcknowledged_orLeftThere() throws Exception {
    String run = UUID.randomUUID().toString().substring(0, 8);
    String hold = "hold-" + run;
    String results = "results-" + run;
    String emulator = PubSubEmulator.shared().hostPort();
    try (PubSubAdmin admin = new PubSubAdmin(emulator); MessagePublisher publisher = new MessagePublisher(emulator)) {
      admin.createTopic("projects/" + PROJECT + "/topics/dead-" + run);
      admin.createSubscription("projects/" + PROJECT + "/subscriptions/" + hold,
          "projects/" + PROJECT + "/topics/dead-" + run);
      admin.createTopic("projects/" + PROJECT + "/topics/" + results);
      admin.createSubscription("projects/" + PROJECT + "/subscriptions/" + results + "-tap",
          "projects/" + PROJECT + "/topics/" + results);
      String deadTopic = "projects/" + PROJECT + "/topics/dead-" + run;
      ObjectFinalized notification = storage.notifications().get(storage.notifications().size() - 1);
      Map<String, String> finalize = new HashMap<>(Map.of("ce-id", "7573320909320", "ce-specversion", "1.0",
          "ce-type", CloudEvent.STORAGE_FINALIZED, "ce-source", "//storage.googleapis.com/projects/_/buckets/inbox",
          "ce-subject", "objects/" + invoice.getName(), "ce-time", notification.eventTime().toString(),
          "ce-bucket", "inbox"));
      finalize.put("CloudPubSubDeadLetterSourceSubscription", "projects/p/subscriptions/eventarc-document-uploaded");
      finalize.put("CloudPubSubDeadLetterSourceDeliveryCount", "30");
      publisher.publish(deadTopic, notification.objectJson().getBytes(StandardCharsets.UTF_8), finalize);
      publisher.publish(deadTopic, "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8),
          Map.of("idempotency_key", "gcs:inbox/a.pdf#1", "CloudPubSubDeadLetterSourceSubscription",
              "projects/p/subscriptions/eventarc-message-delivered", "CloudPubSubDeadLetterSourceDeliveryCount", "30"));
      publisher.publish(deadTopic, "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8),
          Map.of("idempotency_key", "gcs:inbox/b.pdf#1", "once_error", "the endpoint answered 410"));
      publisher.publish(deadTopic, "{\"job\":\"batches/j1\"}".getBytes(StandardCharsets.UTF_8),
          Map.of("idempotency_key", "gemini:batches/j1", "CloudPubSubDeadLetterSourceSubscription",
              "projects/p/subscriptions/eventarc-batch-completed", "CloudPubSubDeadLetterSourceDeliveryCount", "30"));
      Map<String, String> env = Map.of("PUBSUB_EMULATOR_HOST", emulator, "GOOGLE_CLOUD_PROJECT", PROJECT,
          "FIRESTORE_EMULATOR_HOST", "127.0.0.1:1");

      OnceRunner.Result listed = OnceRunner.run(env, "--yes", "redrive", "--dead-letter-subscription", hold, "--list");
      assertEquals(Exit.OK, listed.status(), listed.all());
      assertTrue(listed.out().contains("4 dead letter(s)"), listed.all());
      assertTrue(listed.out().contains("finalize of objects/" + invoice.getName() + " in inbox (from"
          + " projects/p/subscriptions/eventarc-document-uploaded after 30 deliveries)"), listed.all());
      assertTrue(function.received().isEmpty(), "a listing re-drives nothing");

      OnceRunner.Result result = OnceRunner.run(env, "--yes", "redrive", "--dead-letter-subscription", hold,
          "--to", function.url("/").toString(), "--results-topic", results);

      assertEquals(Exit.OK, result.status(), result.all());
      assertEquals(1, function.received().size(), result.all());
      Receiver.Received posted = function.received().get(0);
      assertEquals("7573320909320", posted.header("ce-id"), "the event's own id");
      assertEquals("inbox", posted.header("ce-bucket"));
      assertEquals("objects/" + invoice.getName(), posted.header("ce-subject"));
      assertEquals(JSON.readTree(notification.objectJson()), JSON.readTree(posted.body()));
      List<PubsubMessage> republished = admin.pull("projects/" + PROJECT + "/subscriptions/" + results + "-tap");
      assertEquals(1, republished.size());
      assertEquals(Map.of("idempotency_key", "gcs:inbox/a.pdf#1"), republished.get(0).getAttributesMap(),
          "Pub/Sub's dead-letter attributes dropped, the key kept");
      assertTrue(result.out().contains("left there, its notification is recorded as refused for good"), result.all());
      List<PubsubMessage> left = admin.pull("projects/" + PROJECT + "/subscriptions/" + hold);
      assertEquals(2, left.size(), "the refused result and the batch job's hand-off stay, never notified");
      assertTrue(
          left.stream().anyMatch(m -> "the endpoint answered 410".equals(m.getAttributesMap().get("once_error"))));
      assertTrue(result.out().contains("hand-off of batch job gemini:batches/j1 to BatchCompleted (from"),
          result.all());
      assertFalse(result.err().contains("could not"), result.all());

      OnceRunner.Result empty = OnceRunner.run(env, "--yes", "redrive", "--dead-letter-subscription", hold);
      assertEquals(Exit.NOTHING, empty.status(), empty.all());
    }
  }

  /** A dead letter whose re-drive throws what the tool did not foresee stays there; the others are still re-driven. */
  @Test
  void aDeadLetterThatCannotBeRedriven_isLeftThere_asARemoteFailure_andTheOthersAreRedriven() throws Exception {
    String run = UUID.randomUUID().toString().substring(0, 8);
    String hold = "hold-" + run;
    String results = "results-" + run;
    String emulator = PubSubEmulator.shared().hostPort();
    try (PubSubAdmin admin = new PubSubAdmin(emulator); MessagePublisher publisher = new MessagePublisher(emulator)) {
      String deadTopic = "projects/" + PROJECT + "/topics/dead-" + run;
      admin.createTopic(deadTopic);
      admin.createSubscription("projects/" + PROJECT + "/subscriptions/" + hold, deadTopic);
      admin.createTopic("projects/" + PROJECT + "/topics/" + results);
      // A finalize without ce-source: no CloudEvent can be made of it.
      publisher.publish(deadTopic, "{}".getBytes(StandardCharsets.UTF_8), Map.of("ce-id", "1",
          "ce-type", CloudEvent.STORAGE_FINALIZED, "ce-subject", "objects/x.pdf", "ce-bucket", "inbox"));
      publisher.publish(deadTopic, "{\"status\":\"analysed\"}".getBytes(StandardCharsets.UTF_8),
          Map.of("idempotency_key", "gcs:inbox/a.pdf#1"));
      Map<String, String> env = Map.of("PUBSUB_EMULATOR_HOST", emulator, "GOOGLE_CLOUD_PROJECT", PROJECT,
          "FIRESTORE_EMULATOR_HOST", "127.0.0.1:1");

      OnceRunner.Result result = OnceRunner.run(env, "--yes", "redrive", "--dead-letter-subscription", hold,
          "--to", function.url("/").toString(), "--results-topic", results);

      assertEquals(Exit.REMOTE, result.status(), result.all());
      assertTrue(
          result.out()
              .contains("finalize of objects/x.pdf in inbox: not re-driven, left there: NullPointerException: source"),
          result.all());
      assertTrue(result.out().contains("result gcs:inbox/a.pdf#1: re-published to"), result.all());
      assertEquals(1, result.errLinesBesideTheNotice(), "one line, no stack trace\n" + result.all());
      assertTrue(function.received().isEmpty());
      List<PubsubMessage> left = admin.pull("projects/" + PROJECT + "/subscriptions/" + hold);
      assertEquals(1, left.size(), "handed back at once: " + result.all());
      assertEquals("objects/x.pdf", left.get(0).getAttributesMap().get("ce-subject"));
    }
  }
}
