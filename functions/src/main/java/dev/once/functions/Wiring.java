package dev.once.functions;

import dev.once.budget.Budget;
import dev.once.budget.DailyBudget;
import dev.once.config.InvalidSetting;
import dev.once.config.Lazy;
import dev.once.config.MissingSetting;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.functions.completion.CompletionFlow;
import dev.once.functions.delivery.DeliveryFlow;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.functions.reconcile.GaugeLine;
import dev.once.functions.reconcile.ReconcileFlow;
import dev.once.functions.webhook.CompletedJobs;
import dev.once.functions.webhook.CompletionHandoff;
import dev.once.functions.webhook.WebhookHandler;
import dev.once.gemini.DynamicWebhookVerifier;
import dev.once.gemini.GeminiSetting;
import dev.once.gemini.WebhookSignatures;
import dev.once.gemini.WebhookVerifier;
import dev.once.http.IdempotentPost;
import dev.once.ledger.LedgerOptions;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.FirestoreBatchGauges;
import dev.once.pipeline.NotificationSigner;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.ResultPublication;
import dev.once.pipeline.ResultSignature;
import java.net.URI;
import java.time.Duration;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Builds each function's flow from the instance's clients. Every setting the function needs is read here, when
 * the instance starts (the invoker constructs the function class then): a missing or invalid one fails the start
 * with the variable's name, so a bad deployment fails {@code terraform apply} instead of a day of events. The
 * clients themselves are still built on first use.
 */
public final class Wiring {
  /** The message of the spending guard's log lines, which the budget metrics and alerts read (observability.tf). */
  static final String BUDGET_LOG_MESSAGE = "gemini budget";

  private Wiring() {}

  public static DocumentFlow documentFlow(Clients clients) {
    Settings settings = clients.settings;
    checkLedger(settings);
    checkGemini(clients);
    DocumentFlow.Mode mode = PipelineSettings.mode(settings);
    PipelineSettings.webhookUrl(settings); // named by every batch job (BatchJobs)
    long maxBytes = settings.positiveLong(PipelineSetting.MAX_DOCUMENT_BYTES);
    DocumentFlow.PaidCalls paid = new DocumentFlow.PaidCalls(settings.seconds(GeminiSetting.GEMINI_TIMEOUT_SECONDS),
        clients.once.maxAttempts());
    Lazy<DocumentReader> reader = Lazy.of(() -> new DocumentReader(clients.storage.get()));
    BatchSubmitter submitter =
        mode == DocumentFlow.Mode.BATCH ? batchSubmitter(clients, reader, InstantSource.system()) : null;
    return new DocumentFlow(clients.once, clients.records, clients.queries, budget(clients), clients.estimator,
        reader, clients.analyzer, () -> submitter, resultPublication(clients), mode, maxBytes, paid);
  }

  /** Batch mode's gathering of queued documents into jobs, with its BATCH_* settings checked. */
  public static BatchSubmitter batchSubmitter(Clients clients, Supplier<DocumentReader> reader, InstantSource clock) {
    Settings settings = clients.settings;
    PipelineSettings.inlineMaxBytes(settings);
    BatchSubmitter.Limits limits = new BatchSubmitter.Limits(PipelineSettings.batchMaxDocuments(settings),
        PipelineSettings.batchMaxBytes(settings), PipelineSettings.batchMaxWait(settings),
        PipelineSettings.batchMaxJobsInFlight(settings),
        settings.seconds(GeminiSetting.GEMINI_TIMEOUT_SECONDS),
        settings.positiveLong(PipelineSetting.MAX_DOCUMENT_BYTES));
    return new BatchSubmitter(clients.once, clients.gatherings, clients.queries, clients.records, reader,
        clients.batchJobs, resultPublication(clients), limits, clock, budget(clients), clients.estimator);
  }

  /**
   * The spending guard: GEMINI_DAILY_BUDGET_USD (unset or blank: none, and then it reads and writes nothing) over a
   * day starting at midnight in ONCE_BUDGET_TIMEZONE (UTC), judged by Firestore's clock. The model must have a price,
   * or its calls could not be bounded.
   */
  static Budget budget(Clients clients) {
    Settings settings = clients.settings;
    ZoneId zone = PipelineSettings.budgetZone(settings);
    Optional<String> amount = settings.optional(GeminiSetting.GEMINI_DAILY_BUDGET_USD);
    if (amount.isEmpty()) {
      return Budget.NONE;
    }
    long microUsd = PipelineSettings.microUsd(amount.get());
    String model = settings.required(GeminiSetting.GEMINI_MODEL);
    if (clients.prices.get().schedule(model).isEmpty()) {
      throw new InvalidSetting(GeminiSetting.GEMINI_DAILY_BUDGET_USD, "cannot be kept: the model " + model
          + " has no price, so its calls cannot be bounded; add it to GEMINI_PRICES");
    }
    return new DailyBudget(clients.ledger, microUsd, zone, clients.once.log(), BUDGET_LOG_MESSAGE);
  }

  static DeliveryFlow deliveryFlow(Clients clients) {
    Settings settings = clients.settings;
    checkLedger(settings);
    URI endpoint = PipelineSettings.httpUrl(settings, PipelineSetting.NOTIFY_URL);
    Duration timeout = settings.seconds(PipelineSetting.NOTIFY_TIMEOUT_SECONDS);
    NotificationSigner signer =
        NotificationSigner.fromSecrets(settings.required(PipelineSetting.NOTIFY_SIGNING_SECRET));
    String deadLetterTopic = clients.topic(PipelineSetting.DEAD_LETTER_TOPIC);
    return new DeliveryFlow(clients.once, Lazy.of(() -> IdempotentPost.to(endpoint).withTimeout(timeout)
        .withHeaders(signer)), clients.publisher, () -> deadLetterTopic);
  }

  public static CompletionFlow completionFlow(Clients clients) {
    checkLedger(clients.settings);
    checkGemini(clients);
    return new CompletionFlow(clients.once, clients.batchJobs, clients.records, clients.queries, clients.gatherings,
        resultPublication(clients), clients.settings.positiveInt(OnceSetting.ONCE_MAX_ATTEMPTS),
        InstantSource.system());
  }

  /**
   * The webhook, wired with what its handler uses and nothing more: its signatures, one ledger read per delivery and
   * the hand-off. No Gemini key, no results topic: the public function holds nothing a parser bug could spend.
   */
  static WebhookHandler webhookHandler(String name, Clients clients) {
    return new WebhookHandler(name, webhookSignatures(clients), new CompletedJobs(clients.once, clients.queries),
        completionHandoff(clients), clients.once.log());
  }

  /** The webhook's hand-off of finished jobs to BatchCompleted, its topic resolved now. */
  static CompletionHandoff completionHandoff(Clients clients) {
    checkLedger(clients.settings);
    String topic = clients.topic(PipelineSetting.BATCH_COMPLETIONS_TOPIC);
    return new CompletionHandoff(clients.publisher, () -> topic);
  }

  /**
   * The webhook's configurations: static with GEMINI_WEBHOOK_SECRET, dynamic with GEMINI_WEBHOOK_URL (the audience its
   * tokens must name), either or both; neither fails the start.
   */
  static WebhookSignatures webhookSignatures(Clients clients) {
    Settings settings = clients.settings;
    Optional<WebhookVerifier> staticWebhooks =
        settings.optional(GeminiSetting.GEMINI_WEBHOOK_SECRET).map(WebhookVerifier::fromSecrets);
    URI jwks = PipelineSettings.httpUrl(settings, GeminiSetting.GEMINI_WEBHOOK_JWKS_URL);
    String issuer = settings.required(GeminiSetting.GEMINI_WEBHOOK_ISSUER);
    Optional<DynamicWebhookVerifier> dynamicWebhooks =
        PipelineSettings.webhookUrl(settings).map(url -> new DynamicWebhookVerifier(
            DynamicWebhookVerifier.Options.forAudience(url).withJwksUrl(jwks).withIssuer(issuer)));
    if (staticWebhooks.isEmpty() && dynamicWebhooks.isEmpty()) {
      throw new MissingSetting("neither GEMINI_WEBHOOK_URL nor GEMINI_WEBHOOK_SECRET is set: set GEMINI_WEBHOOK_URL"
          + " to this function's URL (dynamic webhooks, named by each batch job), GEMINI_WEBHOOK_SECRET to the whsec_"
          + " secret of a registered webhook (static webhooks), or both");
    }
    return new WebhookSignatures(staticWebhooks, dynamicWebhooks);
  }

  static ReconcileFlow reconcileFlow(Clients clients) {
    // A day short of the ledger's retention: older jobs may have lost their records (see ReconcileFlow).
    Duration maxAge = clients.settings.days(OnceSetting.ONCE_RETENTION_DAYS).minus(Duration.ofDays(1));
    // It resumes deferred documents itself, as DocumentUploaded would analyse them: the same flow and settings.
    DocumentFlow documents = documentFlow(clients);
    // Whatever the mode: gatherings left by a batch revision are still submitted after a switch to sync.
    BatchSubmitter submitter = batchSubmitter(clients, Lazy.of(() -> new DocumentReader(clients.storage.get())),
        InstantSource.system());
    return new ReconcileFlow(clients.batchJobs, clients.queries, clients.gatherings, completionFlow(clients),
        () -> documents, () -> submitter, budget(clients),
        ReconcileFlow.Limits.deployed(maxAge.isNegative() ? Duration.ZERO : maxAge),
        InstantSource.system(), clients.once.log());
  }

  /** The reconciler's line of batch gauges, against the cap it is deployed with. */
  static GaugeLine gaugeLine(Clients clients) {
    return new GaugeLine(Lazy.of(() -> new FirestoreBatchGauges(clients.firestore.get())),
        PipelineSettings.batchMaxJobsInFlight(clients.settings), clients.once.log());
  }

  /** The results topic, resolved now: publishing needs it on every path. */
  private static ResultPublication resultPublication(Clients clients) {
    String topic = clients.topic(PipelineSetting.RESULTS_TOPIC);
    return new ResultPublication(clients.once, clients.publisher, () -> topic, resultSignature(clients));
  }

  /** RESULTS_SIGNING_KEY: what signs every published result, and what MessageDelivered checks. */
  static ResultSignature resultSignature(Clients clients) {
    return ResultSignature.fromKeys(clients.settings.required(PipelineSetting.RESULTS_SIGNING_KEY));
  }

  private static void checkLedger(Settings settings) {
    LedgerOptions.fromSettings(settings);
  }

  /**
   * The Gemini client's settings, the model (one Google shut down fails the start), the price table and the records'
   * retention, parsed now; the client on first use.
   */
  private static void checkGemini(Clients clients) {
    clients.settings.required(GeminiSetting.GEMINI_API_KEY);
    clients.models.check(clients.settings.required(GeminiSetting.GEMINI_MODEL), LocalDate.now(ZoneOffset.UTC));
    clients.settings.seconds(GeminiSetting.GEMINI_TIMEOUT_SECONDS);
    clients.records.get();
  }

}
