package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.once.local.http.AmbiguousFailure;
import dev.once.local.http.Faults;
import dev.once.local.http.RetryPolicy;
import dev.once.local.http.StandIn;
import dev.once.wire.gemini.WebhookSigner;
import dev.once.wire.http.Counters;
import dev.once.wire.http.Json;
import dev.once.wire.http.LocalServer;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Gemini Developer API stand-in for the real {@code google-genai} SDK: build the client with
 * {@code HttpOptions.baseUrl(baseUrl())} and any API key. Batch jobs move only when told to ({@link #advance()},
 * {@link #completeAll()}, {@link #finish}) or on an optional ticker; when one ends, the stand-in sends a webhook
 * POST in the chosen {@link WebhookMode}: to the job's {@code webhookConfig.uris} signed as a dynamic webhook (an
 * RS256 JWT, keys at {@link #jwksUrl()}), else to the registered URLs signed as a static one (Standard Webhooks
 * HMAC). Every call is counted per method, and again once carried out; {@link #ambiguousNext} makes carried-out
 * calls fail as a caller would see a lost answer.
 */
public final class GeminiStandIn implements StandIn {
  private static final Logger LOG = Logger.getLogger(GeminiStandIn.class.getName());

  /**
   * Startup settings. {@code apiKey} null accepts any non-empty key; {@code webhookSecret} null generates one;
   * {@code tick} null or zero means the clock moves only when told to. {@code jobUrisReplaceGlobal}: a job's own
   * {@code webhookConfig.uris} replace the registered URLs (as the API documents), or are added to them.
   */
  public record Options(int port, String apiKey, String webhookSecret, List<URI> webhookUrls, Duration tick,
      long maxRequestBytes, long maxUploadBytes, long maxStoredBytes, WebhookMode webhookMode,
      boolean jobUrisReplaceGlobal, RetryPolicy webhookRetry, Duration webhookTimeout) {
    public static final long DEFAULT_MAX_REQUEST_BYTES = 20L * 1024 * 1024;
    /** The Files API's limits: 2 GB per file, 20 GB per project ({@link GeminiFiles}). */
    public static final long DEFAULT_MAX_UPLOAD_BYTES = GeminiFiles.MAX_FILE_BYTES;
    public static final long DEFAULT_MAX_STORED_BYTES = GeminiFiles.MAX_PROJECT_BYTES;

    public Options {
      webhookUrls = List.copyOf(webhookUrls);
      if (webhookSecret != null) {
        WebhookSigner.fromSecret(webhookSecret);
      }
    }

    /** Webhooks are tried 5 times, from 200 ms apart up to 30 s, each waiting 10 s for its answer. */
    public static Options defaults() {
      return new Options(0, null, null, List.of(), null, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MAX_UPLOAD_BYTES,
          DEFAULT_MAX_STORED_BYTES, WebhookMode.NORMAL, true,
          new RetryPolicy(5, Duration.ofHours(1), Duration.ofMillis(200),
              Duration.ofSeconds(30), 2.0),
          Duration.ofSeconds(10));
    }

    public Options withPort(int value) {
      return new Options(value, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withApiKey(String value) {
      return new Options(port, value, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withWebhookSecret(String value) {
      return new Options(port, apiKey, value, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withWebhookUrl(URI value) {
      List<URI> urls = new ArrayList<>(webhookUrls);
      urls.add(value);
      return new Options(port, apiKey, webhookSecret, urls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withTick(Duration value) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, value, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withMaxRequestBytes(long value) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, value, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    /** The Files API's limits: per file, and for all files together (the project's storage). */
    public Options withFileLimits(long perFile, long stored) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, perFile, stored,
          webhookMode, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withWebhookMode(WebhookMode value) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, value, jobUrisReplaceGlobal, webhookRetry, webhookTimeout);
    }

    public Options withJobUrisReplaceGlobal(boolean value) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, value, webhookRetry, webhookTimeout);
    }

    /**
     * How long each webhook POST waits for its answer before it counts as failed and is sent again (10 s by default).
     * A test that counts deliveries exactly gives the receiver longer: on a loaded machine a webhook function's answer
     * took 21-31 s, and each timed-out POST is one delivery more, and one hand-off more, than the test meant.
     */
    public Options withWebhookTimeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("a webhook timeout is positive, got " + value);
      }
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry, value);
    }

    public Options withWebhookRetries(int maxAttempts, Duration initialBackoff) {
      return new Options(port, apiKey, webhookSecret, webhookUrls, tick, maxRequestBytes, maxUploadBytes,
          maxStoredBytes, webhookMode, jobUrisReplaceGlobal, webhookRetry.withMaxAttempts(maxAttempts)
              .withBackoff(initialBackoff, webhookRetry.maxBackoff()),
          webhookTimeout);
    }
  }

  private final Options options;
  private final Counters counters = new Counters();
  private final Faults faults = new Faults();
  private final WebhookSigner signer;
  private final DynamicWebhookSigner dynamicSigner = DynamicWebhookSigner.generate();
  private final WebhookSender sender;
  private final GeminiFiles files;
  private final ServedModels models = ServedModels.load();
  private final StandInClock clock = new StandInClock();
  private volatile ContentGenerator.Behaviour behaviour = ContentGenerator.Behaviour.GOOGLE;
  private final BatchJobs jobs;
  private final List<URI> registeredWebhooks;
  private final Map<String, WebhookMode> jobModes = new ConcurrentHashMap<>();
  private final ScheduledExecutorService ticker;
  private final LocalServer server;
  private volatile WebhookMode webhookMode;
  /**
   * v1a by default: the only format live dynamic deliveries were reported to carry (googleapis/python-genai#2927);
   * the JWT Google's documentation shows is signed on request.
   */
  private volatile DynamicSignature dynamicSignature = DynamicSignature.V1A;

  private GeminiStandIn(Options options) {
    this.options = options;
    this.signer = WebhookSigner.fromSecret(
        options.webhookSecret() != null ? options.webhookSecret() : WebhookSigner.newSecret());
    this.sender = new WebhookSender(signer, dynamicSigner, () -> dynamicSignature, counters, options.webhookRetry(),
        options.webhookTimeout());
    this.files = new GeminiFiles(options.maxUploadBytes(), options.maxStoredBytes());
    this.jobs = new BatchJobs(files, models, () -> behaviour, clock, this::jobEnded);
    this.registeredWebhooks = new CopyOnWriteArrayList<>(options.webhookUrls());
    this.webhookMode = options.webhookMode();
    this.server = LocalServer.startResettable(options.port(), new GeminiApi(jobs, models, () -> behaviour, files,
        counters, faults,
        new GeminiAdmin(this), this::baseUrl, () -> Json.parseTrusted(dynamicSigner.publicKeys().toString()),
        this::resetConnection, options.apiKey(), options.maxRequestBytes(), options.maxUploadBytes()));
    this.ticker = startTicker(options.tick());
  }

  public static GeminiStandIn start() {
    return start(Options.defaults());
  }

  public static GeminiStandIn start(Options options) {
    return new GeminiStandIn(options);
  }

  /** The server root, for {@code HttpOptions.baseUrl} and {@code GEMINI_BASE_URL}; the SDK adds the version. */
  @Override
  public String baseUrl() {
    return server.baseUrl();
  }

  public int port() {
    return server.port();
  }

  /**
   * Where the public keys of dynamic webhooks are served ({@code GET /.well-known/jwks.json}, the path of Google's
   * {@code https://generativelanguage.googleapis.com/.well-known/jwks.json}): point a verifier's JWKS URL here.
   */
  public URI jwksUrl() {
    return URI.create(baseUrl() + "/.well-known/jwks.json");
  }

  /** The {@code kid} of the key dynamic webhooks are signed with (made at first use). */
  public String dynamicWebhookKeyId() {
    return dynamicSigner.keyId();
  }

  /** The keys dynamic webhooks are signed with, so a test can make tokens the stand-in's JWKS verifies. */
  public DynamicWebhookSigner dynamicWebhookSigner() {
    return dynamicSigner;
  }

  /** The {@code whsec_...} secret static webhooks are signed with (generated when none was given). */
  public String webhookSecret() {
    return signer.secret();
  }

  /**
   * Calls per method (generateContent, batchGenerateContent, batches.get/list/cancel/delete, files.*), each also as
   * {@code <method>.carriedOut} (done: the paid call made, the job created, read or cancelled, the file served) and
   * {@code <method>.ambiguous} (done, then answered late, reset or 5xx); webhook.*, jwks.get.
   */
  public Counters counters() {
    return counters;
  }

  public long count(String method) {
    return counters.get(method);
  }

  /** Every live job one step: PENDING to RUNNING, RUNNING to its planned end. Returns the names that ended. */
  public List<String> advance() {
    return jobs.advance().stream().map(BatchJob.Snapshot::name).toList();
  }

  /** Every live job straight to its planned end. Returns the names that ended. */
  public List<String> completeAll() {
    return jobs.completeAll().stream().map(BatchJob.Snapshot::name).toList();
  }

  /** One job ({@code batches/ID}) straight to {@code state}, or to its planned end when {@code state} is null. */
  public void finish(String name, BatchState state) {
    jobs.finish(name, state);
  }

  /** How this job will end when the clock gets there. */
  public void planOutcome(String name, BatchState terminal) {
    jobs.plan(name, terminal);
  }

  /** How jobs created from now on will end (SUCCEEDED unless changed). */
  public void defaultOutcome(BatchState terminal) {
    jobs.defaultOutcome(terminal);
  }

  /**
   * Any job that holds this document key's request ends FAILED for what its requests hold (google.rpc 3
   * INVALID_ARGUMENT), answering nothing, whatever was planned: one poison document failing its whole job.
   */
  public void poison(String documentKey) {
    jobs.poison(documentKey);
  }

  /** How this job's answers come back when it ends (none given: as Google documents them). */
  public void answerFaults(String name, AnswerFault... faults) {
    jobs.faults(name, Set.of(faults));
  }

  /** How the answers of jobs created from now on come back (none given: as Google documents them). */
  public void defaultAnswerFaults(AnswerFault... faults) {
    jobs.defaultFaults(Set.of(faults));
  }

  /**
   * Moves a model to another stage, as Google does on its dates: {@code served}, {@code routed} (answered by {@code to},
   * its answers' {@code modelVersion}), {@code closed-to-new-projects} or {@code shut-down} (404 with Google's words).
   */
  public void model(String name, String stage, String to) {
    models.move(name, ServedModels.Stage.parse(stage), to);
  }

  /** Sampling parameters refused with a 400 (true), as Google says later models will, or ignored (false, Gemini 3). */
  public void strictSampling(boolean strict) {
    behaviour = new ContentGenerator.Behaviour(strict, behaviour.thinkingTokens());
  }

  /** Every answer thinks this many tokens, whatever its level (0: as its level says). */
  public void thinkingTokens(int tokens) {
    behaviour = new ContentGenerator.Behaviour(behaviour.strictSampling(), tokens);
  }

  /** The stand-in's time from now on starts at {@code now} and runs on (null: the system's): jobs' times bill them. */
  public void clock(Instant now) {
    clock.set(now);
  }

  public BatchState state(String name) {
    return jobs.get(name).state();
  }

  /** The {@code webhookConfig.uris} a job was created with (empty: it named none, its webhooks go to the registered URLs). */
  public List<URI> webhookUris(String name) {
    return jobs.get(name).webhookUris();
  }

  public List<String> batchNames() {
    return jobs.names();
  }

  /**
   * What the job was asked, in the order it was given: each inlined request's {@code {"request","metadata"}}, or each
   * line of its input file ({@code {"key","request"}}).
   */
  public List<JsonNode> requests(String batchName) {
    return jobs.requests(batchName);
  }

  /** The names of the files stored now (uploaded, and batches' responses files). */
  public List<String> fileNames() {
    return files.names();
  }

  /** The bytes of the files stored now, which the project's storage quota bounds. */
  public long storedFileBytes() {
    return files.storedBytes();
  }

  /** A project-level webhook URL, like one registered with the WebhookService. */
  public void registerWebhook(URI url) {
    registeredWebhooks.add(url);
  }

  public void webhookMode(WebhookMode mode) {
    webhookMode = mode;
  }

  public void webhookMode(String batchName, WebhookMode mode) {
    jobModes.put(batchName, mode);
  }

  /** How deliveries to a job's own URIs are signed from now on (JWT unless changed). */
  public void dynamicSignature(DynamicSignature scheme) {
    dynamicSignature = scheme;
  }

  public List<WebhookDelivery> webhookDeliveries() {
    return sender.deliveries();
  }

  /** The next {@code count} API calls answer {@code status} (429 or 503 are what the real service sends). */
  public void failNext(int count, int status) {
    faults.failNext(count, status);
  }

  public void latency(Duration latency) {
    faults.latency(latency);
  }

  /**
   * Every call of {@code operation} (as {@link #ambiguousNext} names them) takes {@code latency}; zero gives it the
   * latency of all the others again.
   */
  public void latency(String operation, Duration latency) {
    faults.latency(knownOperation(operation), latency);
  }

  /**
   * The next {@code count} calls of {@code operation} (as {@link #ambiguousNext} names them) take {@code latency},
   * whatever latency is set later: a call held in flight while its caller is killed, that the call taking over never
   * meets. A count of 0 disarms.
   */
  public void latencyNext(String operation, int count, Duration latency) {
    faults.latencyNext(knownOperation(operation), count, latency);
  }

  /**
   * Holds every call of {@code operation} (as {@link #ambiguousNext} names them) until the gate is released: a call in
   * flight for exactly as long as the test needs it ({@link Faults#hold}).
   */
  public Faults.Gate hold(String operation) {
    return faults.hold(knownOperation(operation));
  }

  /**
   * The next {@code count} calls of {@code operation} (a counter name: generateContent, batchGenerateContent,
   * batches.get, batches.list, batches.cancel, batches.delete, files.upload (an upload's start), files.uploadChunk (its
   * bytes; the last request stores the file), files.get, files.delete, files.download) are carried
   * out, then fail as {@code failure} says. A call the API refuses does not use one up; a count of 0 disarms.
   */
  public void ambiguousNext(String operation, int count, AmbiguousFailure failure) {
    faults.ambiguousNext(knownOperation(operation), count, failure);
  }

  private static String knownOperation(String operation) {
    if (!GeminiApi.OPERATIONS.contains(operation)) {
      throw new IllegalArgumentException("no operation " + operation + " (known: " + GeminiApi.OPERATIONS + ")");
    }
    return operation;
  }

  /** A RESET fault: the connection of this exchange gets a TCP RST instead of its answer. */
  private void resetConnection(HttpExchange exchange) {
    server.reset(exchange);
  }

  private void jobEnded(BatchJob.Snapshot job) {
    if (!job.state().hasWebhookEvent()) {
      return;
    }
    Set<WebhookSender.Target> targets = new LinkedHashSet<>();
    if (job.webhookUris().isEmpty() || !options.jobUrisReplaceGlobal()) {
      registeredWebhooks.forEach(uri -> targets.add(new WebhookSender.Target(uri, false)));
    }
    job.webhookUris().forEach(uri -> targets.add(new WebhookSender.Target(uri, true)));
    sender.send(job, List.copyOf(targets), jobModes.getOrDefault(job.name(), webhookMode), baseUrl());
  }

  private ScheduledExecutorService startTicker(Duration tick) {
    if (tick == null || tick.isZero() || tick.isNegative()) {
      return null;
    }
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gemini-clock");
      t.setDaemon(true);
      return t;
    });
    executor.scheduleAtFixedRate(() -> {
      try {
        jobs.advance();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "the batch clock failed to advance", e);
      }
    }, tick.toMillis(), tick.toMillis(), TimeUnit.MILLISECONDS);
    return executor;
  }

  @Override
  public void close() {
    if (ticker != null) {
      ticker.shutdownNow();
    }
    faults.releaseAll();
    server.close();
    sender.close();
  }
}
