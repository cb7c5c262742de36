package dev.once.local.stack;

import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.FreePort;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.Receiver;
import dev.once.local.http.RetryPolicy;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.ChildProcess;
import dev.once.local.process.Jvm;
import dev.once.local.storage.StorageStandIn;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.gemini.WebhookSigner;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The whole pipeline on this machine, as {@code dev/run}, the end-to-end tests and the benchmarks run it: the
 * Firestore and Pub/Sub emulators (processes), the Cloud Storage and Gemini stand-ins, the Eventarc relay and the
 * notification endpoint (in this JVM), and the five functions, each served from the deploy jar by the Functions
 * Framework invoker in its own JVM and configured only by the environment production uses. The emulators and the
 * functions start in parallel (the functions connect on first use); the relay starts last, once the functions
 * listen and its subscription exists. {@link #close()} stops everything it started.
 */
public final class LocalStack implements AutoCloseable {
  /** The key the functions send to the Gemini stand-in, which accepts no other; only ever sent to 127.0.0.1. */
  public static final String STAND_IN_KEY = "local-stand-in-key";
  private static final AtomicInteger STACKS = new AtomicInteger();

  /** A part did not come up; the message says which and where its log is. */
  public static final class StartFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StartFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  public static Builder builder(String project, Path logDir) {
    return new Builder(project, logDir);
  }

  /** What to start, and how; {@link #functionEnvironment()} is what the functions will get. */
  public static final class Builder {
    private final String project;
    private final Path logDir;
    private final String webhookSecret = WebhookSigner.newSecret();
    /** NOTIFY_SIGNING_SECRET: the notification endpoint's receiver verifies with it. */
    private final String notifySecret = WebhookSigner.newSecret();
    /** RESULTS_SIGNING_KEY: what the pipeline signs its results with. */
    private final String resultsKey = WebhookSigner.newSecret();
    private final Map<String, String> env = new LinkedHashMap<>();
    private final Map<Part, Map<String, String>> functionEnv = new EnumMap<>(Part.class);
    private Duration webhookTimeout;
    private Ports ports = Ports.free();
    private String names = "";
    private boolean sharedEmulators;
    private String geminiApiKey;
    private Duration geminiTick;
    private RetryPolicy relayRetry = RetryPolicy.defaults();
    private boolean pipeline = true;
    private Set<Part> functions = EnumSet.copyOf(Part.functions());
    private boolean dynamicWebhooks;
    private FunctionJars jars;
    private Consumer<String> progress = line -> {};

    private Builder(String project, Path logDir) {
      this.project = project;
      this.logDir = logDir;
    }

    /** Free ports unless given. */
    public Builder ports(Ports value) {
      ports = value;
      return this;
    }

    /**
     * The test JVM's shared emulators ({@link FirestoreEmulator#shared()}) instead of a pair of its own; the
     * stack's topics and subscriptions get a suffix of their own, so stacks sharing an emulator do not meet.
     */
    public Builder sharedEmulators() {
      sharedEmulators = true;
      names = "-" + STACKS.incrementAndGet();
      return this;
    }

    /** No Gemini stand-in: the real API, with this key. */
    public Builder realGemini(String apiKey) {
      geminiApiKey = apiKey;
      return this;
    }

    /** The Gemini stand-in moves its batch jobs one step on each tick (they move only when told to otherwise). */
    public Builder geminiTick(Duration tick) {
      geminiTick = tick;
      return this;
    }

    public Builder relayRetry(RetryPolicy policy) {
      relayRetry = policy;
      return this;
    }

    /**
     * Neither the functions nor the relay: the emulators, the stand-ins and the notification endpoint only,
     * for a caller that starts instances of a function itself ({@link #startInstance}) and sends them events.
     */
    public Builder withoutFunctions() {
      pipeline = false;
      return this;
    }

    /**
     * Only these functions, for a caller that needs no others (sync mode sends nothing to BatchCompleted or the
     * webhook): each function is a JVM, and on a small machine their starts are most of a test's CPU. The relay
     * still routes to the others' ports; what it sends there is refused and retried, as for a stopped function.
     */
    public Builder onlyFunctions(Set<Part> value) {
      if (value.isEmpty() || !Part.functions().containsAll(value)) {
        throw new IllegalArgumentException("not a set of functions: " + value);
      }
      functions = EnumSet.copyOf(value);
      return this;
    }

    /**
     * Batch jobs name the webhook function's URL ({@code GEMINI_WEBHOOK_URL}) and the webhook checks their tokens
     * against the Gemini stand-in's keys, as deployed by default; otherwise webhooks are static, sent to the URL
     * registered with the stand-in.
     */
    public Builder dynamicWebhooks(boolean value) {
      dynamicWebhooks = value;
      return this;
    }

    /** One more variable of every function's environment (a mode, a timeout), over what the stack sets. */
    public Builder env(String name, String value) {
      env.put(name, value);
      return this;
    }

    public Builder env(Map<String, String> values) {
      env.putAll(values);
      return this;
    }

    /**
     * One more variable of one function's environment, over the stack's, kept for its restarts: a function configured
     * apart from the others from its start, as a deployment configures it, instead of a restart that costs a JVM.
     */
    public Builder env(Part function, String name, String value) {
      if (!Part.functions().contains(function)) {
        throw new IllegalArgumentException("not a function: " + function);
      }
      functionEnv.computeIfAbsent(function, f -> new LinkedHashMap<>()).put(name, value);
      return this;
    }

    /**
     * How long the Gemini stand-in's webhook POSTs wait for an answer (its default: 10 s). A test that counts
     * deliveries gives the webhook function minutes: each POST that times out is a delivery more.
     */
    public Builder webhookTimeout(Duration value) {
      webhookTimeout = value;
      return this;
    }

    /** The functions' jars ({@link FunctionJars#locate()} unless given). */
    public Builder jars(FunctionJars value) {
      jars = value;
      return this;
    }

    /** Told one line per part once it is up. */
    public Builder progress(Consumer<String> value) {
      progress = value;
      return this;
    }

    /**
     * What Terraform sets in production, pointed at this machine: the same variables, other values. Anything else
     * in this JVM's environment (GEMINI_MODEL, ONCE_LEASE_SECONDS, …) reaches the functions unchanged.
     */
    public Map<String, String> functionEnvironment() {
      Map<String, String> all = new LinkedHashMap<>();
      all.put("GOOGLE_CLOUD_PROJECT", project);
      all.put("FIRESTORE_EMULATOR_HOST", sharedEmulators ? FirestoreEmulator.shared().hostPort()
          : ports.hostPort(Part.FIRESTORE));
      all.put("PUBSUB_EMULATOR_HOST",
          sharedEmulators ? PubSubEmulator.shared().hostPort() : ports.hostPort(Part.PUBSUB));
      all.put("STORAGE_EMULATOR_HOST", ports.url(Part.STORAGE));
      if (geminiApiKey != null) {
        all.put("GEMINI_API_KEY", geminiApiKey);
      } else {
        all.put("GEMINI_API_KEY", STAND_IN_KEY);
        all.put("GEMINI_BASE_URL", ports.url(Part.GEMINI));
      }
      all.put("GEMINI_WEBHOOK_SECRET", webhookSecret);
      if (dynamicWebhooks) {
        all.put("GEMINI_WEBHOOK_URL", ports.url(Part.GEMINI_WEBHOOK) + "/");
        all.put("GEMINI_WEBHOOK_JWKS_URL", ports.url(Part.GEMINI) + "/.well-known/jwks.json");
      }
      // A topic setting takes a full name or an id: one of each, so both stay tried.
      all.put("RESULTS_TOPIC", Topology.topic(project, Topology.RESULTS_TOPIC + names));
      all.put("DEAD_LETTER_TOPIC", Topology.DEAD_LETTER_TOPIC + names);
      all.put("BATCH_COMPLETIONS_TOPIC", Topology.BATCH_COMPLETIONS_TOPIC + names);
      all.put("NOTIFY_URL", ports.url(Part.NOTIFY) + Topology.NOTIFY_PATH);
      all.put("NOTIFY_SIGNING_SECRET", notifySecret);
      all.put("RESULTS_SIGNING_KEY", resultsKey);
      all.putAll(env);
      return all;
    }

    /** Starts everything, or stops what did start and throws {@link StartFailed}. */
    public LocalStack start() {
      LocalStack stack = new LocalStack(this);
      try {
        stack.startAll();
        return stack;
      } catch (RuntimeException e) {
        stack.close();
        throw e;
      }
    }
  }

  /** The variables the webhook is deployed without (terraform/functions.tf). */
  public static final Set<String> WITHHELD_FROM_THE_WEBHOOK =
      Set.of("GEMINI_API_KEY", "GEMINI_BASE_URL", "RESULTS_TOPIC", "RESULTS_SIGNING_KEY", "NOTIFY_SIGNING_SECRET");

  private final Builder plan;
  private final Map<String, String> environment;
  private final ExecutorService starter = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "stack-start");
    t.setDaemon(true);
    return t;
  });
  /** Every process started, stopped ones too: what a runner lists and watches. */
  private final List<ChildProcess> processes = new CopyOnWriteArrayList<>();
  private final Map<Part, FunctionProcess> functions = new ConcurrentHashMap<>();
  private final List<FunctionProcess> instances = new CopyOnWriteArrayList<>();
  private final Map<Part, List<String>> extraJvm = new ConcurrentHashMap<>();
  private final Map<Part, Map<String, String>> extraEnv = new ConcurrentHashMap<>();
  private final Map<Part, AtomicInteger> restarts = new ConcurrentHashMap<>();
  private final Map<Part, Instant> deaths = new ConcurrentHashMap<>();
  private volatile FirestoreEmulator firestore;
  private volatile PubSubEmulator pubsubEmulator;
  private volatile PubSubAdmin pubsub;
  private volatile StorageStandIn storage;
  private volatile GeminiStandIn gemini;
  private volatile Receiver notify;
  private volatile EventarcRelay relay;
  private volatile Thread watchdog;
  private volatile boolean closed;

  private LocalStack(Builder plan) {
    this.plan = plan;
    this.environment = new ConcurrentHashMap<>(plan.functionEnvironment());
  }

  private void startAll() {
    Ports ports = plan.ports;
    run("the Cloud Storage stand-in", () -> {
      storage = StorageStandIn.start(StorageStandIn.Options.defaults().withPort(ports.of(Part.STORAGE)));
      // Terraform creates the bucket before anything uploads; gcloud storage cp checks it exists first.
      storage.createBucket(Topology.BUCKET);
      plan.progress.accept(Part.STORAGE.title() + " ready on " + storage.baseUrl());
    });
    if (plan.geminiApiKey == null) {
      run("the Gemini stand-in", () -> {
        GeminiStandIn.Options options = GeminiStandIn.Options.defaults().withPort(ports.of(Part.GEMINI))
            .withApiKey(STAND_IN_KEY).withWebhookSecret(plan.webhookSecret).withTick(plan.geminiTick);
        gemini = GeminiStandIn.start(
            plan.webhookTimeout == null ? options : options.withWebhookTimeout(plan.webhookTimeout));
        plan.progress.accept(Part.GEMINI.title() + " ready on " + gemini.baseUrl());
      });
    }
    run("the notification endpoint", () -> {
      // Verifies the notifications as a real receiver would: an unsigned or mis-signed one is answered 401.
      notify = Receiver.start(ports.of(Part.NOTIFY)).verifying(WebhookSigner.fromSecret(plan.notifySecret));
      plan.progress.accept(Part.NOTIFY.title() + " ready on " + notify.url(Topology.NOTIFY_PATH));
    });
    List<CompletableFuture<?>> first = new ArrayList<>();
    first.add(async("the Firestore emulator", () -> {
      if (plan.sharedEmulators) {
        firestore = FirestoreEmulator.shared();
      } else {
        firestore = FirestoreEmulator.start(ports.of(Part.FIRESTORE), plan.logDir);
        processes.add(firestore.process());
      }
      plan.progress.accept(Part.FIRESTORE.title() + " ready on " + firestore.hostPort());
    }));
    CompletableFuture<?> topics = async("the Pub/Sub emulator", () -> {
      if (plan.sharedEmulators) {
        pubsubEmulator = PubSubEmulator.shared();
      } else {
        pubsubEmulator = PubSubEmulator.start(ports.of(Part.PUBSUB), plan.logDir);
        processes.add(pubsubEmulator.process());
      }
      pubsub = new PubSubAdmin(pubsubEmulator.hostPort());
      createTopics();
      plan.progress.accept(Part.PUBSUB.title() + " ready on " + pubsubEmulator.hostPort()
          + ", topics and subscriptions created");
    });
    first.add(topics);
    if (plan.pipeline) {
      List<CompletableFuture<?>> functionStarts = plan.functions.stream()
          .<CompletableFuture<?>>map(function -> async(function.title(), () -> startFunction(function))).toList();
      first.addAll(functionStarts);
      // The relay needs its subscription and should find the functions listening.
      first.add(
          CompletableFuture.allOf(topics, CompletableFuture.allOf(functionStarts.toArray(CompletableFuture[]::new)))
              .thenRunAsync(() -> run("the Eventarc relay", this::startRelay), starter));
    }
    awaitAll(first);
  }

  private void createTopics() {
    pubsub.createTopic(resultsTopic());
    pubsub.createTopic(deadLetterTopic());
    pubsub.createTopic(batchCompletionsTopic());
    pubsub.createSubscription(subscription(Topology.DELIVERED_SUBSCRIPTION), resultsTopic());
    pubsub.createSubscription(subscription(Topology.COMPLETED_SUBSCRIPTION), batchCompletionsTopic());
    pubsub.createSubscription(resultsTap(), resultsTopic());
    pubsub.createSubscription(deadLetterHold(), deadLetterTopic());
  }

  private void startRelay() {
    relay = EventarcRelay.start(EventarcRelay.Options.defaults().withPort(plan.ports.of(Part.RELAY))
        .withRetry(plan.relayRetry).withPubSubEmulatorHost(pubsubEmulator.hostPort()));
    relay.route(CloudEvent.STORAGE_FINALIZED, url(Part.DOCUMENT_UPLOADED));
    relay.routeTopic(resultsTopic(), url(Part.MESSAGE_DELIVERED));
    relay.routeTopic(batchCompletionsTopic(), url(Part.BATCH_COMPLETED));
    relay.attach(storage);
    relay.subscribe(subscription(Topology.DELIVERED_SUBSCRIPTION));
    relay.subscribe(subscription(Topology.COMPLETED_SUBSCRIPTION));
    if (gemini != null) {
      gemini.registerWebhook(url(Part.GEMINI_WEBHOOK));
    }
    plan.progress.accept(Part.RELAY.title() + " ready on " + relay.baseUrl());
  }

  private void startFunction(Part function) {
    List<String> flags = new ArrayList<>(Jvm.quick("-Xmx512m"));
    flags.addAll(extraJvm.getOrDefault(function, List.of()));
    Map<String, String> env = environment(function);
    env.putAll(extraEnv.getOrDefault(function, Map.of()));
    FunctionProcess process = FunctionProcess.start(jars().launch(flags), function.target(),
        plan.ports.of(function), env, plan.logDir.resolve(function.fileName() + ".log"));
    processes.add(process.process());
    functions.put(function, process);
    plan.progress.accept(function.title() + " listening on " + url(function) + " ("
        + environment.getOrDefault("ANALYSIS_MODE", "sync") + ")");
  }

  private FunctionJars jars() {
    if (plan.jars == null) {
      plan.jars = FunctionJars.locate();
    }
    return plan.jars;
  }

  /**
   * One more instance of {@code function} on a free port, with the stack's environment and these JVM flags, not
   * routed by the relay: a caller sends it events itself. Stopped with the stack, if not before.
   */
  public FunctionProcess startInstance(Part function, List<String> jvmFlags, String logName) {
    return startInstance(function, jvmFlags, Map.of(), logName);
  }

  /** {@link #startInstance(Part, List, String)} with {@code env} over the function's environment. */
  public FunctionProcess startInstance(Part function, List<String> jvmFlags, Map<String, String> env, String logName) {
    Map<String, String> environment = environment(function);
    environment.putAll(env);
    FunctionProcess process = FunctionProcess.start(jars().launch(jvmFlags), function.target(), FreePort.pick(),
        environment, plan.logDir.resolve(logName));
    processes.add(process.process());
    instances.add(process);
    return process;
  }

  /** The function's current process. */
  public FunctionProcess function(Part function) {
    return functions.get(function);
  }

  /** {@code http://127.0.0.1:PORT/}, known before the function starts. */
  public URI url(Part function) {
    return URI.create(plan.ports.url(function) + "/");
  }

  /** Replaces a function's process with one started with these extra JVM flags (crash points), kept for its restarts. */
  public synchronized void restartWith(Part function, List<String> jvmFlags) {
    extraJvm.put(function, List.copyOf(jvmFlags));
    stop(function);
    startFunction(function);
  }

  /** Replaces a function's process with one whose environment adds (or overrides) {@code env}, kept for its restarts. */
  public synchronized void restartWith(Part function, Map<String, String> env) {
    extraEnv.put(function, Map.copyOf(env));
    stop(function);
    startFunction(function);
  }

  /** Restarts the functions with {@code env} over their environment, as a redeploy would (stand-ins keep their state). */
  public void restartFunctions(Map<String, String> env) {
    awaitAll(plan.functions.stream().<CompletableFuture<?>>map(f -> async("stopping " + f.title(), () -> stop(f)))
        .toList());
    environment.putAll(env);
    awaitAll(plan.functions.stream().<CompletableFuture<?>>map(f -> async(f.title(), () -> startFunction(f)))
        .toList());
  }

  /** Stops a function (its port refuses connections, so the relay retries) until {@link #resume}. */
  public void stop(Part function) {
    FunctionProcess process = functions.get(function);
    if (process != null) {
      process.close();
    }
  }

  public synchronized void resume(Part function) {
    startFunction(function);
  }

  /**
   * From now on, a function process that dies (a crash point killed it, or a test did) is replaced at once by a
   * new one on the same port, as the platform replaces a crashed instance.
   */
  public synchronized void keepAlive() {
    if (watchdog != null) {
      return;
    }
    watchdog = Thread.ofPlatform().daemon().name("function-watchdog").start(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        for (Part function : plan.functions) {
          synchronized (this) {
            if (!functions.get(function).isAlive() && !Thread.currentThread().isInterrupted()) {
              deaths.put(function, Instant.now());
              restarts.computeIfAbsent(function, f -> new AtomicInteger()).incrementAndGet();
              startFunction(function);
            }
          }
        }
        LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      }
    });
  }

  /** When the watchdog last found a process of {@code function} dead (within its 50 ms round), if ever. */
  public Optional<Instant> lastDeath(Part function) {
    return Optional.ofNullable(deaths.get(function));
  }

  /** How many times the watchdog replaced a dead process of {@code function}. */
  public int restarts(Part function) {
    return restarts.getOrDefault(function, new AtomicInteger()).get();
  }

  /** Every function's environment now (a test starts a sibling process with it). */
  public Map<String, String> environment() {
    return new LinkedHashMap<>(environment);
  }

  /**
   * What {@code function} is started with: the stack's environment and its own ({@link Builder#env(Part, String,
   * String)}) less what Terraform withholds from it. The public
   * webhook gets no Gemini key, no Gemini server, no results topic and no signing key, as deployed (it reads a record
   * and publishes a hand-off).
   */
  public Map<String, String> environment(Part function) {
    Map<String, String> env = environment();
    env.putAll(plan.functionEnv.getOrDefault(function, Map.of()));
    if (function == Part.GEMINI_WEBHOOK) {
      env.keySet().removeAll(WITHHELD_FROM_THE_WEBHOOK);
    }
    return env;
  }

  public String project() {
    return plan.project;
  }

  public Path logDir() {
    return plan.logDir;
  }

  public String webhookSecret() {
    return plan.webhookSecret;
  }

  /** NOTIFY_SIGNING_SECRET: what a receiver of the notifications verifies them with. */
  public String notifySecret() {
    return plan.notifySecret;
  }

  /** RESULTS_SIGNING_KEY: what signs the results the pipeline publishes (a test forging one lacks it). */
  public String resultsKey() {
    return plan.resultsKey;
  }

  public StorageStandIn storage() {
    return storage;
  }

  /** The Gemini stand-in; null with the real API. */
  public GeminiStandIn gemini() {
    return gemini;
  }

  public Receiver notifyEndpoint() {
    return notify;
  }

  /** The relay; null without the functions. */
  public EventarcRelay relay() {
    return relay;
  }

  public FirestoreEmulator firestore() {
    return firestore;
  }

  public PubSubEmulator pubsubEmulator() {
    return pubsubEmulator;
  }

  /** Topics, subscriptions and pulls on this stack's Pub/Sub emulator. */
  public PubSubAdmin pubsub() {
    return pubsub;
  }

  public String resultsTopic() {
    return Topology.topic(plan.project, Topology.RESULTS_TOPIC + plan.names);
  }

  public String deadLetterTopic() {
    return Topology.topic(plan.project, Topology.DEAD_LETTER_TOPIC + plan.names);
  }

  /** The webhook's hand-offs of finished batch jobs to BatchCompleted. */
  public String batchCompletionsTopic() {
    return Topology.topic(plan.project, Topology.BATCH_COMPLETIONS_TOPIC + plan.names);
  }

  /** A subscription to every published result. */
  public String resultsTap() {
    return subscription(Topology.RESULTS_TAP);
  }

  /** Keeps dead letters, as Terraform's {@code …-dead-letter-hold} does. */
  public String deadLetterHold() {
    return subscription(Topology.DEAD_LETTER_HOLD);
  }

  private String subscription(String id) {
    return Topology.subscription(plan.project, id + plan.names);
  }

  /** Every process started so far, stopped ones too (the emulators' only when the stack started its own). */
  public List<ChildProcess> processes() {
    return List.copyOf(processes);
  }

  /** Where each process part logs: the emulators (when the stack's own) and the functions. */
  public Map<Part, Path> logs() {
    Map<Part, Path> logs = new EnumMap<>(Part.class);
    if (!plan.sharedEmulators && firestore != null) {
      logs.put(Part.FIRESTORE, firestore.log());
    }
    if (!plan.sharedEmulators && pubsubEmulator != null) {
      logs.put(Part.PUBSUB, pubsubEmulator.log());
    }
    functions.forEach((function, process) -> logs.put(function, process.log()));
    return logs;
  }

  /**
   * Stops the relay first (its Pub/Sub messages are nacked, not lost), then the functions, then everything else.
   * Safe to call twice and from a shutdown hook.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (watchdog != null) {
      watchdog.interrupt();
    }
    quietly(relay);
    List<AutoCloseable> running = new ArrayList<>(functions.values());
    running.addAll(instances);
    awaitQuietly(running);
    quietly(notify);
    quietly(gemini);
    quietly(storage);
    quietly(pubsub);
    if (!plan.sharedEmulators) {
      awaitQuietly(Arrays.asList(firestore, pubsubEmulator));
    }
    processes.forEach(ChildProcess::close); // whatever is left, e.g. a process stopped while it was starting
    starter.shutdownNow();
  }

  private void awaitQuietly(List<? extends AutoCloseable> parts) {
    List<CompletableFuture<?>> stops = new ArrayList<>();
    for (AutoCloseable part : parts) {
      stops.add(CompletableFuture.runAsync(() -> quietly(part), starter));
    }
    stops.forEach(CompletableFuture::join);
  }

  private static void quietly(AutoCloseable part) {
    if (part == null) {
      return;
    }
    try {
      part.close();
    } catch (Exception e) {
      // stopping: one part's failure must not keep the others running
    }
  }

  private CompletableFuture<?> async(String what, Runnable start) {
    return CompletableFuture.runAsync(() -> run(what, start), starter);
  }

  private void run(String what, Runnable start) {
    if (closed) {
      throw new StartFailed("stopped before " + what + " started", null);
    }
    try {
      start.run();
    } catch (RuntimeException e) {
      throw new StartFailed(what + " did not start: " + e.getMessage(), e);
    }
  }

  /** Waits for every start; fails with every distinct failure's message, one a line. */
  private static void awaitAll(List<CompletableFuture<?>> futures) {
    List<String> failures = new ArrayList<>();
    Throwable firstCause = null;
    for (CompletableFuture<?> future : futures) {
      try {
        future.join();
      } catch (CompletionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        firstCause = firstCause == null ? cause : firstCause;
        String message = cause.getMessage();
        if (message != null && !failures.contains(message)) {
          failures.add(message);
        }
      }
    }
    if (!failures.isEmpty()) {
      throw new StartFailed(String.join("\n", failures), firstCause);
    }
  }
}
