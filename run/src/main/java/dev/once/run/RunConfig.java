package dev.once.run;

import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.local.http.RetryPolicy;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * How {@code dev/run} was asked to run: mode, ports, where logs go, and which Gemini.
 *
 * @param geminiApiKey the real Gemini API's key when {@code GEMINI_API_KEY} is set (then no stand-in runs), else null
 * @param reconcileEvery how often the runner calls the reconciler itself (Cloud Scheduler's job), or null for never
 * @param collection the ledger's collection: ONCE_COLLECTION reaches the functions from the runner's environment
 */
public record RunConfig(Mode mode, Ports ports, Path logDir, String project, String geminiApiKey,
    Duration reconcileEvery, boolean demo, String collection) {

  public static final String PROJECT = "once-local";
  public static final Path DEFAULT_LOG_DIR = Path.of("target", "run");
  /** Jobs move PENDING → RUNNING → their end on each tick, so batch mode finishes by itself in a few seconds. */
  static final Duration GEMINI_TICK = Duration.ofSeconds(2);
  /** Eventarc backs off up to minutes; locally, a redelivery of an event in flight should come back quickly. */
  static final Duration RELAY_MAX_BACKOFF = Duration.ofSeconds(5);
  /**
   * And it keeps trying as long as Eventarc would for an event in flight: 200 tries, up to an hour. The relay's
   * defaults (10 tries, about 26 s here) gave up on a doubled notification whose twin held the claim longer than that
   * on a loaded machine, and the demo reported the event lost.
   */
  static final int RELAY_MAX_ATTEMPTS = 200;
  /** With the real API in batch mode no webhook can reach this machine: the reconciler is the only way. */
  static final Duration REAL_BATCH_RECONCILE = Duration.ofSeconds(60);
  /**
   * With the stand-in in batch mode, the runner plays Cloud Scheduler this often, so a job that is not full is still
   * submitted once its oldest document has waited {@link #BATCH_MAX_WAIT_SECONDS}.
   */
  static final Duration LOCAL_BATCH_RECONCILE = Duration.ofSeconds(10);
  /**
   * Local batch jobs are small, so a handful of uploads shows them shared: the demo's two accepted samples fill one
   * job; documents uploaded by hand wait at most 10 s (and the reconciler's period) for company.
   */
  static final String BATCH_MAX_DOCUMENTS = "2";
  static final String BATCH_MAX_WAIT_SECONDS = "10";
  /**
   * The demo's job is the two accepted samples, full by count: it waits as long as it takes for the second, however
   * slow the machine (with 10 s, two uploads more than 10 s apart on a loaded machine made two jobs of one).
   */
  static final String DEMO_BATCH_MAX_WAIT_SECONDS = "3600";

  static final String USAGE = """
      usage: dev/run [--mode sync|batch] [--demo] [--log-dir DIR]
        Runs the whole pipeline on this machine: the Firestore and Pub/Sub emulators, the Cloud Storage and Gemini
        stand-ins, the Eventarc relay, a notification endpoint and the five functions under the Functions Framework
        invoker, on fixed ports (ONCE_<PART>_PORT moves one; see README). Ctrl-C stops everything.
        --mode    the functions' ANALYSIS_MODE (default sync)
        --demo    start, run the demo in sync and then batch mode, print what happened, stop; exit 1 if an effect
                  ran twice or an event was lost (the demo always uses the Gemini stand-in)
        --log-dir where every part's log goes (default target/run)
        GEMINI_API_KEY set: the functions call the real Gemini API and no stand-in runs.
        ONCE_RECONCILE_SECONDS: call the reconciler this often (default in batch mode: every 60 s with the real API,
          10 s with the stand-in, which also submits the batch jobs that waited long enough).""";

  public boolean realGemini() {
    return geminiApiKey != null;
  }

  /**
   * The stack this configuration runs: on its ports, logging to its directory, the functions in its mode, Gemini's
   * batch jobs moving on a clock, the relay retrying quickly.
   */
  public LocalStack.Builder stack() {
    LocalStack.Builder stack = LocalStack.builder(project, logDir).ports(ports).geminiTick(GEMINI_TICK)
        .relayRetry(RetryPolicy.defaults().withMaxAttempts(RELAY_MAX_ATTEMPTS).withMaxAge(Duration.ofHours(1))
            .withBackoff(Duration.ofMillis(200), RELAY_MAX_BACKOFF))
        .env("ANALYSIS_MODE", mode.value())
        .env("BATCH_MAX_DOCUMENTS", BATCH_MAX_DOCUMENTS)
        .env("BATCH_MAX_WAIT_SECONDS", demo ? DEMO_BATCH_MAX_WAIT_SECONDS : BATCH_MAX_WAIT_SECONDS);
    return realGemini() ? stack.realGemini(geminiApiKey) : stack;
  }

  public RunConfig withMode(Mode newMode) {
    return new RunConfig(newMode, ports, logDir, project, geminiApiKey, reconcileEvery, demo, collection);
  }

  /** Tests: the same stack on other ports and another log directory. */
  public static RunConfig of(Mode mode, Ports ports, Path logDir) {
    return new RunConfig(mode, ports, logDir, PROJECT, null, null, false, OnceSetting.ONCE_COLLECTION.defaultValue());
  }

  public static RunConfig parse(String[] args, Map<String, String> env) {
    Cli cli = Cli.parse(args, Set.of("mode", "demo", "log-dir", "help"));
    if (cli.has("help")) {
      throw new Help();
    }
    boolean demo = cli.flag("demo");
    Mode mode = Mode.parse(cli.get("mode", "sync"));
    String key = env.get("GEMINI_API_KEY");
    // The demo drives the stand-in's switches and counts its calls, and should never spend money.
    String realKey = demo || key == null || key.isBlank() ? null : key.strip();
    Duration reconcile = null;
    String every = env.get("ONCE_RECONCILE_SECONDS");
    if (every != null && !every.isBlank()) {
      try {
        long seconds = Long.parseLong(every.strip());
        if (seconds < 1) {
          throw new NumberFormatException();
        }
        reconcile = Duration.ofSeconds(seconds);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "ONCE_RECONCILE_SECONDS must be a positive whole number, got \"" + every + "\"");
      }
    } else if (realKey != null && mode == Mode.BATCH) {
      reconcile = REAL_BATCH_RECONCILE;
    } else if (!demo && mode == Mode.BATCH) {
      reconcile = LOCAL_BATCH_RECONCILE;
    }
    return new RunConfig(mode, Ports.fromEnvironment(env), Path.of(cli.get("log-dir", DEFAULT_LOG_DIR.toString())),
        PROJECT, realKey, reconcile, demo, Settings.of(env).required(OnceSetting.ONCE_COLLECTION));
  }

  /** {@code --help}: print the usage and exit 0. */
  static final class Help extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Help() {
      super(USAGE);
    }
  }
}
