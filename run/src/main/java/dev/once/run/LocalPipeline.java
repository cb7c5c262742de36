package dev.once.run;

import dev.once.local.process.ChildProcess;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.local.storage.GcloudStorage;
import dev.once.run.demo.Demo;
import dev.once.run.demo.DemoReport;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code dev/run}: takes the lock, checks what must hold, starts the {@link LocalStack} (the stand-ins in this JVM,
 * each logging to its own file), prints where everything runs and then the combined log until Ctrl-C (or, with
 * {@code --demo}, runs the demo in both modes and stops). Stopping — Ctrl-C, SIGTERM, the end of the demo, a failed
 * start — stops every process it started, by pid, and removes the lock.
 */
public final class LocalPipeline {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int USAGE = 2;
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

  private volatile RunConfig config;
  private final PrintStream out;
  private final boolean ownsProcess;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile LocalStack stack;
  private volatile StandInLogs standInLogs;
  private volatile RunLock lock;
  private volatile LogFollower follower;
  private volatile ScheduledExecutorService reconciler;

  private LocalPipeline(RunConfig config, PrintStream out, boolean ownsProcess) {
    this.config = config;
    this.out = out;
    this.ownsProcess = ownsProcess;
  }

  public static void main(String[] args) {
    System.exit(run(args, System.getenv(), System.out, System.err, true));
  }

  /**
   * Runs dev/run and returns its exit status. {@code ownsProcess}: this JVM is the runner (not a test), so on the
   * way out every process it spawned is stopped, even one that was still starting.
   */
  static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err, boolean ownsProcess) {
    RunConfig config;
    try {
      config = RunConfig.parse(args, env);
    } catch (RunConfig.Help help) {
      out.println(help.getMessage());
      return OK;
    } catch (IllegalArgumentException e) {
      err.println("dev/run: " + e.getMessage());
      err.println(RunConfig.USAGE);
      return USAGE;
    }
    return new LocalPipeline(config, out, ownsProcess).run(err);
  }

  private int run(PrintStream err) {
    long pid = ProcessHandle.current().pid();
    RunLock.Acquired acquired;
    try {
      acquired = RunLock.acquire(config.logDir(), StackInfo.of(config, pid, List.of()));
    } catch (RunLock.AlreadyRunning e) {
      err.println("dev/run: " + e.getMessage());
      return FAILED;
    }
    lock = acquired.lock();
    Thread hook = new Thread(this::stop, "dev-run-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      FunctionJars jars = FunctionJars.locate();
      List<String> problems = Preflight.problems(config, jars, acquired.leftovers());
      if (!problems.isEmpty()) {
        problems.forEach(p -> err.println("dev/run: " + p));
        return FAILED;
      }
      clearLogs();
      say("starting the pipeline (" + config.mode().value() + " mode); logs in " + shown(config.logDir()));
      if (config.realGemini()) {
        say("GEMINI_API_KEY is set: the functions call the real Gemini API, and the Gemini stand-in is not started");
      }
      standInLogs = StandInLogs.open(config.logDir());
      try {
        stack = config.stack().jars(jars).progress(this::say).start();
      } catch (LocalStack.StartFailed e) {
        err.println("dev/run: could not start the pipeline:");
        e.getMessage().lines().forEach(l -> err.println("  " + l));
        return FAILED;
      }
      standInLogs.follow(stack.notifyEndpoint());
      lock.update(StackInfo.of(config, pid, stack));
      printTable();
      return config.demo() ? demo(pid) : follow(pid);
    } finally {
      stop();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running or ran: nothing to remove
      }
    }
  }

  /** Normal mode: the combined log until the process is stopped (the shutdown hook does the rest). */
  private int follow(long pid) {
    Path combined = config.logDir().resolve("combined.log");
    follower = new LogFollower(line -> {
      out.println(line);
      append(combined, line);
    });
    Map<Part, Path> logs = logs();
    for (Part part : Part.values()) {
      Path log = logs.get(part);
      if (log != null && part != Part.FIRESTORE && part != Part.PUBSUB) {
        follower.follow(part.fileName(), log, part.isFunction());
      }
    }
    watchChildren();
    if (config.reconcileEvery() != null) {
      startReconciling(config.reconcileEvery());
    }
    say("ready. Combined log below (also " + shown(combined) + "); Ctrl-C stops everything.");
    try {
      new CountDownLatch(1).await(); // until Ctrl-C: the shutdown hook stops the stack
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return OK;
  }

  private int demo(long pid) {
    List<DemoReport> reports = new ArrayList<>();
    for (Mode mode : List.of(Mode.SYNC, Mode.BATCH)) {
      if (config.mode() != mode) {
        say("restarting the functions with ANALYSIS_MODE=" + mode.value());
        stack.restartFunctions(Map.of("ANALYSIS_MODE", mode.value()));
        config = config.withMode(mode);
        lock.update(StackInfo.of(config, pid, stack));
      }
      say("demo in " + mode.value() + " mode");
      DemoReport report;
      try {
        report = Demo.run(StackInfo.of(config, pid, stack), line -> say(line));
      } catch (RuntimeException e) {
        say("the demo could not run: " + e.getMessage() + "; every part's log is in " + shown(config.logDir()));
        return FAILED;
      }
      out.println();
      report.render().forEach(out::println);
      out.println();
      reports.add(report);
    }
    boolean ok = reports.stream().allMatch(DemoReport::ok);
    say(ok ? "demo passed in both modes: every duplicate was absorbed, nothing ran twice, nothing was lost"
        : "demo FAILED: see the verdicts above; every part's log is in " + shown(config.logDir()));
    return ok ? OK : FAILED;
  }

  /** Every part's log: the processes' own, and the files of the parts in this JVM. */
  private Map<Part, Path> logs() {
    Map<Part, Path> logs = new EnumMap<>(Part.class);
    logs.putAll(standInLogs.files());
    logs.putAll(stack.logs());
    if (config.realGemini()) {
      logs.remove(Part.GEMINI);
    }
    return logs;
  }

  private void printTable() {
    Ports ports = config.ports();
    Map<Part, Path> logs = logs();
    out.println();
    out.println(String.format("  %-24s %-32s %s", "part", "where", "log"));
    for (Part part : Part.values()) {
      if (part == Part.GEMINI && config.realGemini()) {
        out.println(
            String.format("  %-24s %-32s %s", "Gemini", "the real Gemini API", "(GEMINI_API_KEY is set; no stand-in)"));
        continue;
      }
      String where = switch (part) {
        case FIRESTORE, PUBSUB -> ports.hostPort(part);
        case NOTIFY -> ports.url(part) + Topology.NOTIFY_PATH;
        default -> ports.url(part) + (part.isFunction() ? "/" : "");
      };
      out.println(String.format("  %-24s %-32s %s", part.title(), where, shown(logs.get(part))));
    }
    out.println();
    // With the stand-in: its address and the one key it accepts, for `once models` or a function run by hand.
    String gemini = config.realGemini() ? ""
        : " GEMINI_API_KEY=" + LocalStack.STAND_IN_KEY + " GEMINI_BASE_URL=" + ports.url(Part.GEMINI);
    out.println("  export FIRESTORE_EMULATOR_HOST=" + ports.hostPort(Part.FIRESTORE) + " PUBSUB_EMULATOR_HOST="
        + ports.hostPort(Part.PUBSUB) + " STORAGE_EMULATOR_HOST=" + ports.url(Part.STORAGE)
        + " GOOGLE_CLOUD_PROJECT=" + config.project() + gemini);
    out.println("  gcloud storage: " + GcloudStorage.exportLine(ports.url(Part.STORAGE), config.project()));
    out.println(
        "  upload documents to bucket '" + Topology.BUCKET + "' with any Cloud Storage client and those variables;"
            + " dev/demo runs the demo here; dev/inspect KEY shows one key's ledger");
    if (config.reconcileEvery() != null) {
      out.println("  the reconciler is called every " + config.reconcileEvery().toSeconds() + " s"
          + (config.realGemini() && config.mode() == Mode.BATCH
              ? " (the real API cannot send webhooks to this machine: the reconciler completes batch jobs)" : ""));
    }
    out.println();
  }

  /** Says when a part dies on its own: the relay would otherwise just retry into a closed port. */
  private void watchChildren() {
    for (ChildProcess child : stack.processes()) {
      child.onExit().thenRun(() -> {
        if (!stopped.get() && !child.stopped()) {
          say("a part exited on its own: " + child.name() + " (pid " + child.pid() + ", log " + shown(child.log())
              + "); see its log. Ctrl-C and dev/run again to restart.");
        }
      });
    }
  }

  private void startReconciling(Duration every) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    URI url = URI.create(config.ports().url(Part.GEMINI_RECONCILER) + "/");
    reconciler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "reconcile");
      t.setDaemon(true);
      return t;
    });
    reconciler.scheduleWithFixedDelay(() -> {
      try {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofMinutes(3))
            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
          say("the reconciler answered " + answer.statusCode() + ": " + LogRenderer.compact(answer.body()));
        }
      } catch (IOException e) {
        say("could not call the reconciler: " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, every.toSeconds(), every.toSeconds(), TimeUnit.SECONDS);
  }

  /** Idempotent: called by the shutdown hook (Ctrl-C) and on the way out of {@link #run}. */
  private void stop() {
    if (!stopped.compareAndSet(false, true)) {
      return;
    }
    if (reconciler != null) {
      reconciler.shutdownNow();
    }
    LocalStack running = stack;
    if (running != null) {
      say("stopping " + running.processes().size() + " processes and the stand-ins");
      running.close();
    }
    if (standInLogs != null) {
      standInLogs.close();
    }
    if (follower != null) {
      follower.close();
    }
    if (ownsProcess) {
      // A part still starting when Ctrl-C came has no handle yet: every descendant of this JVM is ours.
      ProcessHandle.current().descendants().forEach(ChildProcess::stop);
    }
    if (lock != null) {
      lock.close();
    }
    if (running != null) {
      say("stopped");
    }
  }

  private void clearLogs() {
    try (DirectoryStream<Path> logs = Files.newDirectoryStream(config.logDir(), "*.log")) {
      for (Path log : logs) {
        Files.deleteIfExists(log);
      }
    } catch (IOException e) {
      say("could not clear old logs in " + config.logDir() + ": " + e.getMessage());
    }
  }

  private static void append(Path file, String line) {
    try {
      Files.writeString(file, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      // the console has the line; the file is a convenience
    }
  }

  private void say(String line) {
    out.println(LocalTime.now().format(TIME) + "  " + line);
  }

  /** A path as the user typed it: relative to the working directory when inside it. */
  static String shown(Path path) {
    if (path == null) {
      return "";
    }
    Path cwd = Path.of("").toAbsolutePath();
    Path absolute = path.toAbsolutePath().normalize();
    return absolute.startsWith(cwd) ? cwd.relativize(absolute).toString() : absolute.toString();
  }
}
