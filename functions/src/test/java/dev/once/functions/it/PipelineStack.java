package dev.once.functions.it;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.config.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.FreePort;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.eventarc.CloudEvent;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.eventarc.RetryPolicy;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.gemini.WebhookSigner;
import dev.once.local.http.Receiver;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.storage.StorageStandIn;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The whole pipeline on this machine, as the end-to-end tests drive it: the Firestore and Pub/Sub emulators, the
 * storage and Gemini stand-ins, the Eventarc relay, a notification endpoint, and the four functions, each served
 * from the deploy jar by the real invoker in its own JVM, configured only through the environment.
 */
final class PipelineStack implements AutoCloseable {
  /**
   * Each stack is its own project on the shared emulators, as each deployment is: a reconciler asks Firestore for its
   * pipeline's waiting documents, and must not find another stack's (whose jobs its Gemini stand-in has never seen).
   */
  final String project;
  static final String BUCKET = "inbox";
  static final List<String> FUNCTIONS = List.of("DocumentUploaded", "MessageDelivered", "GeminiWebhook", "GeminiReconciler");
  private static final AtomicInteger STACKS = new AtomicInteger();
  private static final java.net.http.HttpClient HTTP =
      java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * How a test wants the pipeline configured. {@code dynamicWebhooks}: batch jobs name the webhook function's URL
   * ({@code GEMINI_WEBHOOK_URL}) and the webhook checks their tokens against the Gemini stand-in's JWKS, as deployed
   * by default; otherwise Gemini's webhooks are static, sent to the URL registered with the stand-in.
   */
  record Config(String mode, int leaseSeconds, RetryPolicy relayRetry, Map<String, String> extraEnv,
      boolean dynamicWebhooks) {
    Config(String mode, int leaseSeconds, RetryPolicy relayRetry, Map<String, String> extraEnv) {
      this(mode, leaseSeconds, relayRetry, extraEnv, false);
    }

    static Config sync() {
      return new Config("sync", 20, RetryPolicy.defaults().withBackoff(Duration.ofMillis(200), Duration.ofSeconds(2)),
          Map.of());
    }

    Config batch() {
      return new Config("batch", leaseSeconds, relayRetry, extraEnv, dynamicWebhooks);
    }

    Config withDynamicWebhooks() {
      return new Config(mode, leaseSeconds, relayRetry, extraEnv, true);
    }

    Config withEnv(String name, String value) {
      Map<String, String> env = new HashMap<>(extraEnv);
      env.put(name, value);
      return new Config(mode, leaseSeconds, relayRetry, env, dynamicWebhooks);
    }
  }

  final Config config;
  final Path logDir;
  final StorageStandIn storage;
  final GeminiStandIn gemini;
  final EventarcRelay relay;
  final Receiver notify;
  final Firestore db;
  final Storage gcs;
  final PubSubAdmin pubsub;
  final String resultsTopic;
  final String deadLetterTopic;
  final String resultsTap;
  final String deadLetterTap;
  final String webhookSecret = WebhookSigner.newSecret();
  private final Map<String, FunctionProcess> functions = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, Integer> ports = new HashMap<>();
  private final Map<String, List<String>> extraJvmArgs = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, Map<String, String>> extraEnv = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> restarts = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, java.time.Instant> deaths = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile Thread watchdog;
  private final List<PubsubMessage> published = Collections.synchronizedList(new ArrayList<>());
  private final List<PubsubMessage> deadLettered = Collections.synchronizedList(new ArrayList<>());

  private PipelineStack(Config config) {
    int id = STACKS.incrementAndGet();
    this.project = "once-it-" + id;
    this.config = config;
    this.logDir = Path.of(System.getProperty("once.logDir", "target/it-logs"),
        "stack-" + ProcessHandle.current().pid() + "-" + id + "-" + config.mode());
    // The database is not cleared: stacks share the test JVM's emulator, and every test counts by its own keys.
    FirestoreEmulator firestoreEmulator = FirestoreEmulator.shared();
    PubSubEmulator pubsubEmulator = PubSubEmulator.shared();
    this.db = FirestoreClients.forEmulator(project, firestoreEmulator.hostPort());
    this.pubsub = new PubSubAdmin(pubsubEmulator.hostPort());
    this.resultsTopic = "projects/" + project + "/topics/results-" + id;
    this.deadLetterTopic = "projects/" + project + "/topics/dead-letter-" + id;
    String delivered = "projects/" + project + "/subscriptions/delivered-" + id;
    this.resultsTap = "projects/" + project + "/subscriptions/results-tap-" + id;
    this.deadLetterTap = "projects/" + project + "/subscriptions/dead-letter-tap-" + id;
    pubsub.createTopic(resultsTopic);
    pubsub.createTopic(deadLetterTopic);
    pubsub.createSubscription(delivered, resultsTopic);
    pubsub.createSubscription(resultsTap, resultsTopic);
    pubsub.createSubscription(deadLetterTap, deadLetterTopic);

    this.storage = StorageStandIn.start();
    this.gemini = GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookSecret(webhookSecret));
    this.notify = Receiver.start();
    this.relay = EventarcRelay.start(EventarcRelay.Options.defaults().withRetry(config.relayRetry())
        .withPubSubEmulatorHost(pubsubEmulator.hostPort()));
    this.gcs = StorageOptions.http().setHost(storage.endpoint()).setProjectId(project)
        .setCredentials(NoCredentials.getInstance()).build().getService();

    FUNCTIONS.forEach(name -> ports.put(name, FreePort.pick()));
    FUNCTIONS.forEach(this::startFunction);
    relay.route(CloudEvent.STORAGE_FINALIZED, functions.get("DocumentUploaded").url());
    relay.route(CloudEvent.PUBSUB_PUBLISHED, functions.get("MessageDelivered").url());
    relay.attach(storage);
    relay.subscribe(delivered);
    gemini.registerWebhook(functions.get("GeminiWebhook").url());
  }

  static PipelineStack start(Config config) {
    return new PipelineStack(config);
  }

  private static final Map<Config, PipelineStack> SHARED = new HashMap<>();

  /**
   * One stack per configuration for the whole test JVM, for the test classes that only upload and count by key:
   * starting the four functions is the slow part. Stopped when the JVM exits. Tests that crash or cut things
   * start their own.
   */
  static synchronized PipelineStack shared(Config config) {
    PipelineStack stack = SHARED.get(config);
    if (stack == null) {
      stack = new PipelineStack(config);
      SHARED.put(config, stack);
      Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "stop-shared-stack"));
    }
    return stack;
  }

  /** The environment Terraform gives the functions, pointed at this machine's emulators and stand-ins. */
  Map<String, String> environment() {
    Map<String, String> env = new HashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", project);
    env.put("FIRESTORE_EMULATOR_HOST", FirestoreEmulator.shared().hostPort());
    env.put("PUBSUB_EMULATOR_HOST", PubSubEmulator.shared().hostPort());
    env.put("STORAGE_EMULATOR_HOST", storage.endpoint());
    env.put("GEMINI_API_KEY", "local-test-key");
    env.put("GEMINI_BASE_URL", gemini.baseUrl());
    env.put("GEMINI_WEBHOOK_SECRET", webhookSecret);
    env.put("GEMINI_TIMEOUT_SECONDS", "5");
    env.put("ONCE_LEASE_SECONDS", String.valueOf(config.leaseSeconds()));
    env.put("RESULTS_TOPIC", resultsTopic);
    env.put("DEAD_LETTER_TOPIC", deadLetterTopic.substring(deadLetterTopic.lastIndexOf('/') + 1)); // an id works too
    env.put("NOTIFY_URL", notify.url("/notify").toString());
    env.put("NOTIFY_TIMEOUT_SECONDS", "2");
    env.put("ANALYSIS_MODE", config.mode());
    if (config.dynamicWebhooks()) {
      env.put("GEMINI_WEBHOOK_URL", webhookUrl());
      env.put("GEMINI_WEBHOOK_JWKS_URL", gemini.jwksUrl().toString());
    }
    env.putAll(config.extraEnv());
    return env;
  }

  /** The GeminiWebhook function's URL, known before it starts (what its {@code FunctionProcess.url()} will be). */
  String webhookUrl() {
    return "http://127.0.0.1:" + ports.get("GeminiWebhook") + "/";
  }

  private synchronized void startFunction(String name) {
    List<String> jvmArgs = new ArrayList<>(List.of("-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    jvmArgs.addAll(extraJvmArgs.getOrDefault(name, List.of()));
    FunctionProcess.Launch launch = new FunctionProcess.Launch(
        Path.of(System.getProperty("once.invokerJar")), Path.of(System.getProperty("once.functionJar")), jvmArgs);
    Map<String, String> env = environment();
    env.putAll(extraEnv.getOrDefault(name, Map.of()));
    functions.put(name, FunctionProcess.start(launch, "dev.once.functions." + name, ports.get(name), env,
        logDir.resolve(name + ".log")));
  }

  FunctionProcess function(String name) {
    return functions.get(name);
  }

  /** Replaces a function's process with one started with these extra JVM flags (crash points, say). */
  synchronized void restart(String name, List<String> jvmArgs) {
    extraJvmArgs.put(name, List.copyOf(jvmArgs));
    functions.get(name).close();
    startFunction(name);
  }

  /**
   * From now on, a function process that dies (a crash point killed it, or a test did) is replaced at once by
   * a new one on the same port, as the platform replaces a crashed instance.
   */
  synchronized void keepAlive() {
    if (watchdog != null) {
      return;
    }
    watchdog = Thread.ofPlatform().daemon().name("function-watchdog").start(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        for (String name : FUNCTIONS) {
          synchronized (this) {
            if (!functions.get(name).isAlive() && !Thread.currentThread().isInterrupted()) {
              deaths.put(name, java.time.Instant.now());
              restarts.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
              startFunction(name);
            }
          }
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
  }

  /** When the watchdog last found a process of {@code name} dead (within its 50 ms round), if ever. */
  java.util.Optional<java.time.Instant> lastDeath(String name) {
    return java.util.Optional.ofNullable(deaths.get(name));
  }

  /** How many times the watchdog replaced a dead process of {@code name}. */
  int restarts(String name) {
    return restarts.getOrDefault(name, new AtomicInteger()).get();
  }

  /** Replaces a function's process with one whose environment adds (or overrides) {@code env}. */
  synchronized void restartWithEnv(String name, Map<String, String> env) {
    extraEnv.put(name, Map.copyOf(env));
    functions.get(name).close();
    startFunction(name);
  }

  /** Stops a function (its port refuses connections, so the relay retries) until {@link #resume}. */
  void pause(String name) {
    functions.get(name).close();
  }

  void resume(String name) {
    startFunction(name);
  }



  Blob upload(String name, byte[] content, String contentType) {
    return gcs.create(BlobInfo.newBuilder(BUCKET, name).setContentType(contentType).build(), content);
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
      return db.collection(collection).get().get().getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + collection, e);
    }
  }

  List<Receiver.Received> notifications() {
    return notify.receivedOn("/notify");
  }

  /** A POST straight to a function, bypassing the relay (tests of hostile input, the scheduler's call). */
  java.net.http.HttpResponse<String> post(String function, byte[] body, Map<String, String> headers) {
    java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(functions.get(function).url())
        .timeout(Duration.ofSeconds(60))
        .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body));
    headers.forEach(request::header);
    try {
      return HTTP.send(request.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** What Cloud Scheduler does: call the reconciler, and read its summary. */
  com.fasterxml.jackson.databind.JsonNode reconcile() {
    java.net.http.HttpResponse<String> response = post("GeminiReconciler", new byte[0], Map.of());
    try {
      com.fasterxml.jackson.databind.JsonNode summary = new com.fasterxml.jackson.databind.ObjectMapper().readTree(response.body());
      if (response.statusCode() != 200) {
        throw new AssertionError("the reconciler answered " + response.statusCode() + ": " + response.body());
      }
      return summary;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
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
      org.junit.jupiter.api.Assertions.assertEquals(1, analysis.size(), "one analysis of " + key);
      org.junit.jupiter.api.Assertions.assertEquals("analysed", analysis.get(0).getString("status"), key);
      org.junit.jupiter.api.Assertions.assertEquals(1, withKey(billing, key).size(), "one billing entry of " + key);
      List<PubsubMessage> copies = attributed(results, key);
      org.junit.jupiter.api.Assertions.assertTrue(
          !copies.isEmpty() && copies.stream().allMatch(c -> c.getData().equals(copies.get(0).getData())),
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

  /** Ledger records (all effects), for "nothing was written" checks. */
  int ledgerRecords() {
    return documents("idempotency").size();
  }

  /** True when the relay has finished every delivery it started (delivered or given up). */
  boolean relayIdle() {
    var counters = relay.counters();
    return counters.get("received") > 0
        && counters.get("delivered") + counters.get("gaveUp") + counters.get("unrouted") >= counters.get("received");
  }

  @Override
  public void close() {
    if (watchdog != null) {
      watchdog.interrupt();
      try {
        watchdog.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    functions.values().forEach(FunctionProcess::close);
    relay.close();
    notify.close();
    gemini.close();
    storage.close();
    pubsub.close();
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
