package dev.once.functions.it;

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
import dev.once.key.PubSubMessageKeys;
import dev.once.ledger.LedgerOptions;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.Jvm;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Topology;
import dev.once.local.storage.StorageStandIn;
import dev.once.pipeline.ResultSignature;
import dev.once.testing.CrashPoints;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.http.Counters;
import dev.once.wire.storage.ObjectFinalized;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The whole pipeline on this machine as the end-to-end tests drive it: a {@link LocalStack} on the test JVM's shared
 * emulators (the five functions each served from the deploy jar by the real invoker in its own JVM, configured only
 * through the environment), with the clients and checks the tests share.
 */
final class PipelineStack implements AutoCloseable {
  static final String BUCKET = Topology.BUCKET;
  static final List<String> FUNCTIONS = Part.functions().stream().map(Part::title).toList();
  /**
   * What a sync-mode stack starts: no batch job is ever made, so nothing reaches BatchCompleted or the webhook, and
   * two JVMs fewer a stack are CPU the tests beside it get. The reconciler only for a test that calls it
   * ({@link Config#withReconciler}): Cloud Scheduler is the test, and most sync tests never play it.
   */
  private static final Set<Part> SYNC_FUNCTIONS = EnumSet.of(Part.DOCUMENT_UPLOADED, Part.MESSAGE_DELIVERED);
  /** One read a test makes (a hang guard: a wait that reads retries a read that fails, until its own deadline). */
  private static final Duration CALL_TIMEOUT = Bounds.CALL;
  private static final AtomicInteger STACKS = new AtomicInteger();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  /**
   * Where tests run what waits in the background (a stack's start, a check beside the matrix): never on
   * CompletableFuture's default pool, which has one thread on a 2-core machine and through which the JDK completes
   * other waits.
   */
  static final ExecutorService BACKGROUND =
      Executors.newVirtualThreadPerTaskExecutor();

  /**
   * How a test wants the pipeline configured. {@code dynamicWebhooks}: batch jobs name the webhook function's URL
   * ({@code GEMINI_WEBHOOK_URL}) and the webhook checks their tokens against the Gemini stand-in's JWKS, as deployed
   * by default; otherwise Gemini's webhooks are static, sent to the URL registered with the stand-in.
   */
  record Config(String mode, int leaseSeconds, RetryPolicy relayRetry, Map<String, String> extraEnv,
      boolean dynamicWebhooks, Map<String, Map<String, String>> functionEnv, boolean reconciler) {
    Config(String mode, int leaseSeconds, RetryPolicy relayRetry, Map<String, String> extraEnv) {
      this(mode, leaseSeconds, relayRetry, extraEnv, false, Map.of(), false);
    }

    /**
     * A patient relay, as Eventarc is (it retries for a day): a delivery meeting a live claim is redelivered until
     * the holder is done, however slow a loaded machine makes the holder. Ten attempts (about 15 s) ran out while a
     * held completion took 21 s beside other forks (BatchWebhookAckIT), and the redelivery the test counts was lost.
     */
    static Config sync() {
      return new Config("sync", 20, RetryPolicy.defaults().withMaxAttempts(200)
          .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(2)), Map.of());
    }

    Config batch() {
      return new Config("batch", leaseSeconds, relayRetry, extraEnv, dynamicWebhooks, functionEnv, reconciler);
    }

    Config withDynamicWebhooks() {
      return new Config(mode, leaseSeconds, relayRetry, extraEnv, true, functionEnv, reconciler);
    }

    /** A sync-mode stack with the reconciler too (a batch-mode stack always has it). */
    Config withReconciler() {
      return new Config(mode, leaseSeconds, relayRetry, extraEnv, dynamicWebhooks, functionEnv, true);
    }

    Config withEnv(String name, String value) {
      Map<String, String> env = new HashMap<>(extraEnv);
      env.put(name, value);
      return new Config(mode, leaseSeconds, relayRetry, env, dynamicWebhooks, functionEnv, reconciler);
    }

    /** One function's own variable, from its start (no restart to set it), over the stack's. */
    Config withEnv(String function, String name, String value) {
      Map<String, Map<String, String>> all = new HashMap<>(functionEnv);
      Map<String, String> env = new HashMap<>(all.getOrDefault(function, Map.of()));
      env.put(name, value);
      all.put(function, Map.copyOf(env));
      return new Config(mode, leaseSeconds, relayRetry, extraEnv, dynamicWebhooks, Map.copyOf(all), reconciler);
    }
  }

  final Config config;
  final LocalStack stack;
  /**
   * Each stack is its own project on the shared emulators, as each deployment is: a reconciler asks Firestore for its
   * pipeline's waiting documents, and must not find another stack's (whose jobs its Gemini stand-in has never seen).
   */
  final String project;
  final Path logDir;
  final StorageStandIn storage;
  final GeminiStandIn gemini;
  final EventarcRelay relay;
  final Receiver notify;
  final Firestore db;
  final Storage gcs;
  final PubSubAdmin pubsub;
  /** NOTIFY_SIGNING_SECRET: what the receiver of the notifications verifies them with. */
  final String notifySecret;
  final String resultsTopic;
  final String deadLetterTopic;
  final String resultsTap;
  final String deadLetterTap;
  final String webhookSecret;
  private final List<FunctionProcess> instances = new ArrayList<>();
  /** The functions running with a crash plan file ({@link #armCrash}). */
  private final Set<String> planned = ConcurrentHashMap.newKeySet();
  private final List<PubsubMessage> published = Collections.synchronizedList(new ArrayList<>());
  private final List<PubsubMessage> deadLettered = Collections.synchronizedList(new ArrayList<>());

  private PipelineStack(Config config, LocalStack stack) {
    this.config = config;
    this.stack = stack;
    this.project = stack.project();
    this.logDir = stack.logDir();
    this.storage = stack.storage();
    this.gemini = stack.gemini();
    this.relay = stack.relay();
    this.notify = stack.notifyEndpoint();
    this.pubsub = stack.pubsub();
    this.resultsTopic = stack.resultsTopic();
    this.deadLetterTopic = stack.deadLetterTopic();
    this.resultsTap = stack.resultsTap();
    this.deadLetterTap = stack.deadLetterHold();
    this.webhookSecret = stack.webhookSecret();
    this.notifySecret = stack.notifySecret();
    this.db = FirestoreClients.forEmulator(stack.project(), stack.firestore().hostPort());
    this.gcs = StorageOptions.http().setHost(storage.endpoint()).setProjectId(stack.project())
        .setCredentials(NoCredentials.getInstance()).build().getService();
  }

  /**
   * A stack of its own on the shared emulators. Every timeout whose firing would change a count the tests assert
   * exactly is long here, as deployed or longer: Gemini's (GEMINI_TIMEOUT_SECONDS, the deployment's 60 s; it was 5 s,
   * and a call answered later on a loaded machine was a failed try, a second paid call, a count off by one), the
   * notify endpoint's (NOTIFY_TIMEOUT_SECONDS 60 s: 2 s, and then 10 s, timed out answers slowed by the JVMs beside
   * it), and the Gemini stand-in's webhook POSTs' (2 min: a webhook answered after 10 s was a delivery and a hand-off
   * more). A test of a timeout sets its own, on the function or the instance it tests.
   */
  static PipelineStack start(Config config) {
    int id = STACKS.incrementAndGet();
    LocalStack.Builder plan = builder("once-it-" + id, id + "-" + config.mode());
    if ("sync".equals(config.mode())) {
      Set<Part> functions = EnumSet.copyOf(SYNC_FUNCTIONS);
      if (config.reconciler()) {
        functions.add(Part.GEMINI_RECONCILER);
      }
      plan.onlyFunctions(functions);
    }
    config.functionEnv()
        .forEach((function, env) -> env.forEach((name, value) -> plan.env(Part.function(function), name, value)));
    LocalStack stack = plan.sharedEmulators().relayRetry(config.relayRetry())
        .dynamicWebhooks(config.dynamicWebhooks())
        .webhookTimeout(Bounds.CALL)
        .env("NOTIFY_TIMEOUT_SECONDS", "60")
        .env("ONCE_LEASE_SECONDS", String.valueOf(config.leaseSeconds()))
        .env("ANALYSIS_MODE", config.mode())
        .env(config.extraEnv())
        .start();
    return new PipelineStack(config, stack);
  }

  /**
   * Several DocumentUploaded instances side by side, as the platform scales one function out, with what they need
   * and no relay: a storm test sends the events itself, spread over the instances ({@link #urls()}). Its own
   * Firestore project, as every stack's, so its counts are its own.
   */
  static PipelineStack storm(int processes) {
    int id = STACKS.incrementAndGet();
    String project = "once-storm-" + id;
    // The deployment's Gemini timeout (60 s): the storm counts Gemini calls exactly, and 10 s timed out answers
    // queued behind the storm's own calls on a loaded machine.
    LocalStack stack = builder(project, id + "-storm").sharedEmulators().withoutFunctions()
        .env("ANALYSIS_MODE", "sync").start();
    PipelineStack storm = new PipelineStack(Config.sync(), stack);
    // Each invoker takes seconds to start: start them together.
    List<CompletableFuture<FunctionProcess>> starting = new ArrayList<>();
    for (int i = 0; i < processes; i++) {
      String log = "DocumentUploaded-" + i + ".log";
      starting.add(CompletableFuture.supplyAsync(
          () -> stack.startInstance(Part.DOCUMENT_UPLOADED, Jvm.quick("-Xmx512m"), log), BACKGROUND));
    }
    starting.forEach(instance -> storm.instances.add(instance.orTimeout(Bounds.START.toMinutes(), TimeUnit.MINUTES)
        .join()));
    return storm;
  }

  /**
   * Batch mode makes a job of each document as soon as it is queued (BATCH_MAX_DOCUMENTS 1), the per-job behaviour
   * most suites test (a completion, its webhook, its crashes); a test of gathering sets its own limits
   * ({@link Config#extraEnv}, applied after these).
   */
  private static LocalStack.Builder builder(String project, String name) {
    return LocalStack.builder(project, Path.of(System.getProperty("once.logDir", "target/it-logs"),
        "stack-" + ProcessHandle.current().pid() + "-" + name)).env("BATCH_MAX_DOCUMENTS", "1");
  }

  private static final Map<Config, PipelineStack> SHARED = new HashMap<>();

  /**
   * One stack per configuration for the whole test JVM, for the test classes that only upload and count by key:
   * starting the five functions is the slow part. Stopped when the JVM exits. Tests that crash or cut things
   * start their own.
   */
  static synchronized PipelineStack shared(Config config) {
    PipelineStack stack = SHARED.get(config);
    if (stack == null) {
      stack = start(config);
      SHARED.put(config, stack);
      Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "stop-shared-stack"));
    }
    return stack;
  }

  /** The environment Terraform gives the functions, pointed at this machine's emulators and stand-ins. */
  /**
   * A Pub/Sub message (Google's JSON shape) with the two attributes the pipeline adds to each result it publishes:
   * its key and its signature with the stack's RESULTS_SIGNING_KEY. MessageDelivered notifies no other.
   */
  com.fasterxml.jackson.databind.node.ObjectNode signedAsResult(JsonNode message, String key) {
    com.fasterxml.jackson.databind.node.ObjectNode copy = message.deepCopy();
    byte[] data = Base64.getDecoder().decode(copy.path("data").asText(""));
    com.fasterxml.jackson.databind.node.ObjectNode attributes = copy.path("attributes").isObject()
        ? (com.fasterxml.jackson.databind.node.ObjectNode) copy.get("attributes") : copy.putObject("attributes");
    attributes.put(PubSubMessageKeys.ATTRIBUTE, key);
    attributes.put(ResultSignature.ATTRIBUTE,
        ResultSignature.fromKeys(stack.resultsKey()).sign(key, data));
    return copy;
  }

  /** What one function was started with: the stack's environment less what Terraform withholds from it. */
  Map<String, String> environment(String function) {
    return stack.environment(Part.function(function));
  }

  Map<String, String> environment() {
    return stack.environment();
  }

  /** The GeminiWebhook function's URL, known before it starts (what its {@code FunctionProcess.url()} will be). */
  String webhookUrl() {
    return stack.url(Part.GEMINI_WEBHOOK).toString();
  }

  FunctionProcess function(String name) {
    return stack.function(Part.function(name));
  }

  /** Replaces a function's process with one started with these extra JVM flags (crash points, say). */
  void restart(String name, List<String> jvmArgs) {
    planned.remove(name);
    stack.restartWith(Part.function(name), jvmArgs);
  }

  /**
   * Arms a crash point of {@code name} (the test kit's CrashPoints): its process kills itself at {@code point} the
   * first time a key {@code keys} matches gets there, and lists the key in {@code log}. The first call restarts the
   * function with a plan file; later ones rewrite the file, which the running process reads at every point, so a
   * matrix moves to its next cell without a restart.
   */
  void armCrash(String name, String point, String keys, Path log) {
    Properties plan = new Properties();
    plan.setProperty(CrashPoints.AT, point);
    plan.setProperty(CrashPoints.KEYS, keys);
    plan.setProperty(CrashPoints.LOG, log.toAbsolutePath().toString());
    writePlan(name, plan);
    if (planned.add(name)) {
      stack.restartWith(Part.function(name),
          List.of("-D" + CrashPoints.PLAN_FILE + "=" + planFile(name).toAbsolutePath()));
    }
  }

  /** No crash point armed in {@code name} from now on; no restart. */
  void disarmCrash(String name) {
    if (planned.contains(name)) {
      writePlan(name, new Properties());
    }
  }

  private Path planFile(String name) {
    return logDir.resolve(name + ".crash-plan");
  }

  /** Replaces the plan in one move, so the process never reads half of one. */
  private void writePlan(String name, Properties plan) {
    Path file = planFile(name);
    Path next = file.resolveSibling(file.getFileName() + ".next");
    try {
      Files.createDirectories(logDir);
      try (Writer writer = Files.newBufferedWriter(next)) {
        plan.store(writer, null);
      }
      Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write the crash plan " + file, e);
    }
  }

  /** Replaces a function's process with one whose environment adds (or overrides) {@code env}. */
  void restartWithEnv(String name, Map<String, String> env) {
    stack.restartWith(Part.function(name), env);
  }

  /**
   * From now on, a function process that dies (a crash point killed it, or a test did) is replaced at once by
   * a new one on the same port, as the platform replaces a crashed instance.
   */
  void keepAlive() {
    stack.keepAlive();
  }

  /** When the watchdog last found a process of {@code name} dead (within its 50 ms round), if ever. */
  Optional<Instant> lastDeath(String name) {
    return stack.lastDeath(Part.function(name));
  }

  /** How many times the watchdog replaced a dead process of {@code name}. */
  int restarts(String name) {
    return stack.restarts(Part.function(name));
  }

  /** Stops a function (its port refuses connections, so the relay retries) until {@link #resume}. */
  void pause(String name) {
    stack.stop(Part.function(name));
  }

  void resume(String name) {
    stack.resume(Part.function(name));
  }

  /** The storm's DocumentUploaded instances. */
  List<URI> urls() {
    return instances.stream().map(FunctionProcess::url).toList();
  }

  Blob upload(String name, byte[] content, String contentType) {
    return gcs.create(BlobInfo.newBuilder(BUCKET, name).setContentType(contentType).build(), content);
  }

  /** The storage stand-in's first finalize notification of an uploaded generation. */
  ObjectFinalized notificationOf(Blob blob) {
    return storage.notifications().stream()
        .filter(n -> n.name().equals(blob.getName()) && n.generation() == blob.getGeneration())
        .findFirst()
        .orElseThrow(() -> new AssertionError("the stand-in sent no notification for " + blob.getName()));
  }

  /** Every result published so far (pulled from a tap subscription on the results topic). */
  List<PubsubMessage> published() {
    published.addAll(pubsub.pull(resultsTap));
    return List.copyOf(published);
  }

  List<PubsubMessage> deadLettered() {
    deadLettered.addAll(pubsub.pull(deadLetterTap));
    return List.copyOf(deadLettered);
  }

  List<QueryDocumentSnapshot> documents(String collection) {
    try {
      return db.collection(collection).get().get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS).getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + collection, e);
    }
  }

  /**
   * The documents of {@code collection} whose {@code key} is {@code key}: one query, where {@code withKey(documents(
   * collection), key)} reads the whole collection of the stack's project, which a wait would do at every poll.
   */
  List<QueryDocumentSnapshot> byKey(String collection, String key) {
    try {
      return db.collection(collection).whereEqualTo("key", key).get().get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)
          .getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read the " + collection + " of " + key, e);
    }
  }

  List<Receiver.Received> notifications() {
    return notify.receivedOn(Topology.NOTIFY_PATH);
  }

  /** A POST straight to a function, bypassing the relay (tests of hostile input, the scheduler's call). */
  HttpResponse<String> post(String function, byte[] body, Map<String, String> headers) {
    return post(function, body, headers, Bounds.CALL);
  }

  private HttpResponse<String> post(String function, byte[] body, Map<String, String> headers, Duration timeout) {
    HttpRequest.Builder request = HttpRequest.newBuilder(function(function).url())
        .timeout(timeout)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    headers.forEach(request::header);
    try {
      return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** What Cloud Scheduler does: call the reconciler, and read its summary. */
  JsonNode reconcile() {
    // Cloud Scheduler waits the run's attempt deadline (terraform/scheduler.tf: minutes); a run that resumes a
    // hundred deferred documents in a just-restarted JVM took over a minute on a loaded machine.
    HttpResponse<String> response = post("GeminiReconciler", new byte[0], Map.of(), Bounds.PATIENT);
    try {
      JsonNode summary = new ObjectMapper().readTree(response.body());
      if (response.statusCode() != 200) {
        throw new AssertionError("the reconciler answered " + response.statusCode() + ": " + response.body());
      }
      return summary;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String key(Blob blob) {
    return "gcs:" + blob.getBucket() + "/" + blob.getName() + "#" + blob.getGeneration();
  }

  static List<QueryDocumentSnapshot> withKey(List<QueryDocumentSnapshot> documents, String key) {
    return documents.stream().filter(d -> key.equals(d.getString("key"))).toList();
  }

  static List<PubsubMessage> attributed(List<PubsubMessage> messages, String key) {
    return messages.stream().filter(m -> key.equals(m.getAttributesMap().get("idempotency_key"))).toList();
  }

  /** Every request the notification endpoint received for one key (failed tries included). */
  List<Receiver.Received> notifiedWith(String key) {
    return notifications().stream().filter(r -> key.equals(r.header("Idempotency-Key"))).toList();
  }

  /** The relay's latest event of a type whose data mentions {@code containing}. */
  CloudEvent lastEvent(String type, String containing) {
    List<CloudEvent> events = relay.events().stream()
        .filter(e -> e.type().equals(type) && e.dataText().contains(containing))
        .toList();
    if (events.isEmpty()) {
      throw new AssertionError("the relay saw no " + type + " event mentioning " + containing);
    }
    return events.get(events.size() - 1);
  }

  /**
   * Every document analysed (with {@code status}) and billed exactly once, and published at least once, every
   * copy the same message under the document's key.
   */
  void assertAnalysedBilledAndPublishedOnce(List<String> keys) {
    List<QueryDocumentSnapshot> analyses = documents("analyses");
    List<QueryDocumentSnapshot> billing = documents("billing");
    List<PubsubMessage> results = published();
    for (String key : keys) {
      List<QueryDocumentSnapshot> analysis = withKey(analyses, key);
      assertEquals(1, analysis.size(), "one analysis of " + key);
      assertEquals("analysed", analysis.get(0).getString("status"), key);
      assertEquals(1, withKey(billing, key).size(), "one billing entry of " + key);
      List<PubsubMessage> copies = attributed(results, key);
      assertTrue(!copies.isEmpty() && copies.stream().allMatch(c -> c.getData().equals(copies.get(0).getData())),
          "published " + key + ", every copy the same");
    }
  }

  /** Calls the reconciler, unless it is down (killed, and not replaced yet): the next call will do. */
  void reconcileIfUp() {
    try {
      reconcile();
    } catch (RuntimeException | AssertionError e) {
      // killed mid-run by a crash point, or restarting
    }
  }

  /** Waits for {@code done}, calling the reconciler every {@code every} meanwhile, as Cloud Scheduler would. */
  void awaitReconciling(Duration deadline, Duration every, BooleanSupplier done, String what) {
    Instant[] last = {Instant.now()};
    Await.until(deadline, () -> {
      if (done.getAsBoolean()) {
        return true;
      }
      if (Instant.now().isAfter(last[0].plus(every))) {
        last[0] = Instant.now();
        reconcileIfUp(); // the reconciler may be the process a crash point just killed
      }
      return false;
    }, what);
  }

  /**
   * The stack's ledger as a test reads it: each read bounded by {@link Bounds#CALL}, not the functions' 30 s (a read
   * outside a wait that fails on a slow emulator fails the test although nothing was wrong).
   */
  FirestoreLedger ledger() {
    return new FirestoreLedger(db, LedgerOptions.defaults().withRpcTimeout(CALL_TIMEOUT));
  }

  /** Ledger records (all effects), for "nothing was written" checks. */
  int ledgerRecords() {
    return documents("idempotency").size();
  }

  /** True when the relay has finished every delivery it started (delivered or given up). */
  boolean relayIdle() {
    Counters counters = relay.counters();
    return counters.get("received") > 0
        && counters.get("delivered") + counters.get("gaveUp") + counters.get("unrouted") >= counters.get("received");
  }

  @Override
  public void close() {
    stack.close();
    try {
      gcs.close();
    } catch (Exception ignored) {
      // test teardown
    }
    try {
      db.close();
    } catch (Exception ignored) {
      // test teardown
    }
  }
}
