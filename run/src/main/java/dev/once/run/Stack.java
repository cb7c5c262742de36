package dev.once.run;

import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.eventarc.EventarcRelay;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.gemini.WebhookSigner;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.storage.StorageStandIn;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The whole pipeline as separate processes on this machine, wired as in production: the emulators, the stand-ins,
 * the relay and the four functions served from their deploy jar by the Functions Framework invoker. Parts start in
 * parallel where nothing depends on them (the functions connect on first use); the relay starts last, once the
 * functions listen and its subscription exists. {@link #close()} stops every process it started, by pid.
 */
public final class Stack implements AutoCloseable {
  /** Jobs move PENDING → RUNNING → their end on each tick, so batch mode finishes by itself in a few seconds. */
  static final String GEMINI_TICK = "2s";
  /** Eventarc backs off up to minutes; locally, a redelivery of an event in flight should come back quickly. */
  static final String RELAY_MAX_BACKOFF = "5s";

  private final RunConfig config;
  private final FunctionJars jars;
  private final Consumer<String> progress;
  private final String webhookSecret = WebhookSigner.newSecret();
  private final ExecutorService starter = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "stack-start");
    t.setDaemon(true);
    return t;
  });
  /** One process this stack started: what it is and where it logs. */
  private record Spawned(String name, ProcessHandle handle, Path log) {}

  /** Every process as soon as it exists, so a stop during start-up finds it too. */
  private final List<Spawned> spawned = new CopyOnWriteArrayList<>();
  /** Pids stopped on purpose (a mode switch), whose exit is no news. */
  private final java.util.Set<Long> retired = ConcurrentHashMap.newKeySet();
  private final Map<Part, ChildProcess> standIns = new ConcurrentHashMap<>();
  private final Map<Part, FunctionProcess> functions = new ConcurrentHashMap<>();
  private volatile FirestoreEmulator firestore;
  private volatile PubSubEmulator pubsub;
  private volatile Mode mode;
  private volatile boolean closed;

  private Stack(RunConfig config, FunctionJars jars, Consumer<String> progress) {
    this.config = config;
    this.jars = jars;
    this.progress = progress;
    this.mode = config.mode();
  }

  /** Starts everything, or stops what did start and throws {@link StartFailed}. */
  public static Stack start(RunConfig config, FunctionJars jars, Consumer<String> progress) {
    Stack stack = new Stack(config, jars, progress);
    try {
      stack.startAll();
      return stack;
    } catch (RuntimeException e) {
      stack.close();
      throw e;
    }
  }

  /** A part did not come up; the message says which and where its log is. */
  public static final class StartFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StartFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private void startAll() {
    Path logs = config.logDir();
    Ports ports = config.ports();
    List<CompletableFuture<?>> first = new ArrayList<>();
    first.add(async("the Firestore emulator", () -> {
      firestore = FirestoreEmulator.start(ports.of(Part.FIRESTORE), logs);
      register(Part.FIRESTORE.title(), firestore.pid(), firestore.log());
      progress.accept("Firestore emulator ready on " + ports.hostPort(Part.FIRESTORE));
    }));
    CompletableFuture<?> topics = async("the Pub/Sub emulator", () -> {
      pubsub = PubSubEmulator.start(ports.of(Part.PUBSUB), logs);
      register(Part.PUBSUB.title(), pubsub.pid(), pubsub.log());
      createTopics();
      progress.accept("Pub/Sub emulator ready on " + ports.hostPort(Part.PUBSUB) + ", topics and subscriptions created");
    });
    first.add(topics);
    first.add(async("the notification endpoint",
        () -> startStandIn(Part.NOTIFY, NotifyEndpoint.class, List.of("--port", port(Part.NOTIFY)))));
    first.add(async("the Cloud Storage stand-in", () -> startStandIn(Part.STORAGE, StorageStandIn.class,
        List.of("--port", port(Part.STORAGE), "--notify-url", ports.url(Part.RELAY) + "/_ingest/storage"))));
    if (!config.realGemini()) {
      first.add(async("the Gemini stand-in", () -> startStandIn(Part.GEMINI, GeminiStandIn.class,
          List.of("--port", port(Part.GEMINI), "--api-key", FunctionEnvironment.STAND_IN_KEY,
              "--webhook-secret", webhookSecret, "--webhook-url", ports.url(Part.GEMINI_WEBHOOK) + "/",
              "--tick", GEMINI_TICK))));
    }
    List<CompletableFuture<?>> functionStarts = startFunctions();
    first.addAll(functionStarts);
    // The relay needs its subscription and should find the functions listening.
    List<CompletableFuture<?>> all = new ArrayList<>(first);
    all.add(CompletableFuture.allOf(topics, CompletableFuture.allOf(functionStarts.toArray(CompletableFuture[]::new)))
        .thenRunAsync(() -> run("the Eventarc relay", () -> startStandIn(Part.RELAY, EventarcRelay.class, List.of(
            "--port", port(Part.RELAY),
            "--route", "storage=" + ports.url(Part.DOCUMENT_UPLOADED) + "/",
            "--route", "pubsub=" + ports.url(Part.MESSAGE_DELIVERED) + "/",
            "--pubsub-emulator", ports.hostPort(Part.PUBSUB),
            "--pubsub-subscription", Topology.subscription(config.project(), Topology.DELIVERED_SUBSCRIPTION),
            "--max-backoff", RELAY_MAX_BACKOFF))), starter));
    awaitAll(all);
  }

  private List<CompletableFuture<?>> startFunctions() {
    List<CompletableFuture<?>> starts = new ArrayList<>();
    for (Part function : Part.functions()) {
      starts.add(async(function.title(), () -> startFunction(function)));
    }
    return starts;
  }

  private void startFunction(Part function) {
    FunctionProcess.Launch launch = new FunctionProcess.Launch(jars.invokerJar(), jars.functionJar(),
        Jvm.flags(List.of("-Xmx512m")));
    FunctionProcess process = FunctionProcess.start(launch, function.target(), config.ports().of(function),
        FunctionEnvironment.of(config.withMode(mode), webhookSecret), log(function));
    register(function.title(), process.pid(), process.log());
    functions.put(function, process);
    progress.accept(function.title() + " listening on " + config.ports().url(function) + "/ (" + mode.value() + ")");
  }

  private void startStandIn(Part part, Class<?> main, List<String> args) {
    ChildProcess child = ChildProcess.start(part.title(), main.getName(), args, log(part),
        process -> spawned.add(new Spawned(part.title(), process.toHandle(), log(part))));
    standIns.put(part, child);
    progress.accept(part.title() + " ready on " + child.url());
  }

  private void createTopics() {
    String project = config.project();
    try (PubSubAdmin admin = new PubSubAdmin(config.ports().hostPort(Part.PUBSUB))) {
      admin.createTopic(Topology.topic(project, Topology.RESULTS_TOPIC));
      admin.createTopic(Topology.topic(project, Topology.DEAD_LETTER_TOPIC));
      admin.createSubscription(Topology.subscription(project, Topology.DELIVERED_SUBSCRIPTION),
          Topology.topic(project, Topology.RESULTS_TOPIC));
      admin.createSubscription(Topology.subscription(project, Topology.RESULTS_TAP),
          Topology.topic(project, Topology.RESULTS_TOPIC));
      admin.createSubscription(Topology.subscription(project, Topology.DEAD_LETTER_HOLD),
          Topology.topic(project, Topology.DEAD_LETTER_TOPIC));
    }
  }

  /**
   * Restarts the four functions with another {@code ANALYSIS_MODE} on the same ports; the emulators keep their data
   * and the stand-ins their state, as a redeploy would.
   */
  public void switchMode(Mode newMode) {
    List<CompletableFuture<?>> stops = new ArrayList<>();
    for (Part function : Part.functions()) {
      FunctionProcess process = functions.remove(function);
      if (process != null) {
        retired.add(process.pid());
        stops.add(async("stopping " + function.title(), process::close));
      }
    }
    awaitAll(stops);
    mode = newMode;
    awaitAll(startFunctions());
  }

  public Mode mode() {
    return mode;
  }

  public RunConfig config() {
    return config.withMode(mode);
  }

  /** What dev/demo and dev/inspect need to find this stack; {@code pid} is the runner's. */
  public StackInfo info(long pid) {
    return StackInfo.of(config(), pid, pids());
  }

  private void register(String name, long pid, Path log) {
    ProcessHandle.of(pid).ifPresent(handle -> spawned.add(new Spawned(name, handle, log)));
  }

  /** Every process started so far (some may have stopped). */
  public List<Long> pids() {
    return spawned.stream().map(s -> s.handle().pid()).distinct().toList();
  }

  /** False once the process was stopped on purpose (by a mode switch or {@link #close()}). */
  public boolean isRunning(long pid) {
    return !closed && !retired.contains(pid);
  }

  /** {@code DocumentUploaded (pid 123, log target/run/DocumentUploaded.log)}. */
  public String describe(long pid) {
    return spawned.stream().filter(s -> s.handle().pid() == pid).findFirst()
        .map(s -> s.name() + " (pid " + pid + ", log " + LocalPipeline.shown(s.log()) + ")")
        .orElse("pid " + pid);
  }

  public Map<Part, Path> logs() {
    Map<Part, Path> logs = new EnumMap<>(Part.class);
    for (Part part : Part.values()) {
      if (part == Part.FIRESTORE && firestore != null) {
        logs.put(part, firestore.log());
      } else if (part == Part.PUBSUB && pubsub != null) {
        logs.put(part, pubsub.log());
      } else if (part != Part.FIRESTORE && part != Part.PUBSUB && !(part == Part.GEMINI && config.realGemini())) {
        logs.put(part, log(part));
      }
    }
    return logs;
  }

  private Path log(Part part) {
    return config.logDir().resolve(part.fileName() + ".log");
  }

  private String port(Part part) {
    return String.valueOf(config.ports().of(part));
  }

  /**
   * Stops the relay first (its Pub/Sub messages are nacked, not lost), then the functions, then everything else;
   * each by its pid, SIGTERM then SIGKILL after a grace period. Safe to call twice and from a shutdown hook.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    ChildProcess relay = standIns.remove(Part.RELAY);
    if (relay != null) {
      relay.close();
    }
    List<CompletableFuture<?>> stops = new ArrayList<>();
    functions.values().forEach(f -> stops.add(CompletableFuture.runAsync(f::close, starter)));
    awaitQuietly(stops);
    stops.clear();
    standIns.values().forEach(s -> stops.add(CompletableFuture.runAsync(s::close, starter)));
    if (firestore != null) {
      stops.add(CompletableFuture.runAsync(firestore::close, starter));
    }
    if (pubsub != null) {
      stops.add(CompletableFuture.runAsync(pubsub::close, starter));
    }
    awaitQuietly(stops);
    // Anything spawned whose handle never reached a field (a part stopped while it was still starting).
    spawned.forEach(s -> ChildProcess.stop(s.handle()));
    starter.shutdownNow();
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

  private static void awaitAll(List<CompletableFuture<?>> futures) {
    List<String> failures = new ArrayList<>();
    Throwable firstCause = null;
    for (CompletableFuture<?> future : futures) {
      try {
        future.join();
      } catch (CompletionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        if (firstCause == null) {
          firstCause = cause;
        }
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

  private static void awaitQuietly(List<CompletableFuture<?>> futures) {
    for (CompletableFuture<?> future : futures) {
      try {
        future.join();
      } catch (CompletionException e) {
        // stopping: one part's failure must not keep the others running
      }
    }
  }
}
