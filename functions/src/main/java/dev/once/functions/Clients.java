package dev.once.functions;

import com.google.cloud.NoCredentials;
import com.google.cloud.ServiceOptions;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.genai.Client;
import dev.once.config.InvalidSetting;
import dev.once.config.Lazy;
import dev.once.config.OnceSetting;
import dev.once.config.Setting;
import dev.once.config.Settings;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiClients;
import dev.once.gemini.GeminiSetting;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.gemini.JobErrors;
import dev.once.gemini.ModelWatch;
import dev.once.gemini.PriceTable;
import dev.once.guard.Once;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.Ledgers;
import dev.once.observe.Log;
import dev.once.pipeline.FirestoreGatherings;
import dev.once.pipeline.FirestoreRecordQueries;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.Topics;
import java.time.InstantSource;
import java.util.function.Supplier;

/**
 * The clients of one function instance, each built on first use and then shared by every request: a duplicate
 * delivery builds the Firestore client only, never Storage's or Gemini's. All are thread-safe, so the instance
 * can serve concurrent requests. Settings are read as the clients are built; {@link Wiring} checks the ones a
 * function needs when it starts.
 */
public final class Clients {
  /** Built by the first function constructed: a setting it cannot use fails that constructor, naming the variable. */
  private static final Lazy<Clients> INSTANCE = Lazy.of(() -> new Clients(Settings.fromEnvironment()));

  final Settings settings;
  public final Lazy<Firestore> firestore;
  public final Ledger ledger;
  public final Once once;
  final Lazy<PriceTable> prices;
  public final Lazy<RecordWrites> records;
  public final Lazy<RecordQueries> queries;
  public final Lazy<Gatherings> gatherings;
  public final Lazy<Storage> storage;
  public final Lazy<Client> gemini;
  public final Lazy<InvoiceAnalyzer> analyzer;
  public final Lazy<CostEstimator> estimator;
  public final Lazy<BatchJobs> batchJobs;
  public final Lazy<MessagePublisher> publisher;
  final ModelWatch models;

  Clients(Settings settings) {
    this(settings, () -> FirestoreClients.create(settings));
  }

  /**
   * With the Firestore client made by {@code firestoreFactory} (still on first use): the seam through which the
   * cost benchmark hands in a client whose channel counts every call.
   */
  Clients(Settings settings, Supplier<Firestore> firestoreFactory) {
    this(settings, firestoreFactory, Log.stdout());
  }

  /** With the guard (and the flows and budget that log through it) writing its lines to {@code log}. */
  Clients(Settings settings, Supplier<Firestore> firestoreFactory, Log log) {
    this.settings = settings;
    this.firestore = Lazy.of(firestoreFactory);
    this.ledger = Ledgers.lazy(() -> new FirestoreLedger(firestore.get(), LedgerOptions.fromSettings(settings)));
    this.once = Once.over(ledger, settings).loggingTo(log);
    this.models = new ModelWatch(log);
    this.prices = Lazy.of(() -> PriceTable.fromSettings(settings));
    this.records = Lazy.of(() -> new RecordWrites(prices.get(), PipelineSettings.recordsRetention(settings),
        InstantSource.system()));
    this.queries = Lazy.of(() -> new FirestoreRecordQueries(firestore.get()));
    this.gatherings = Lazy.of(() -> new FirestoreGatherings(firestore.get()));
    this.storage = Lazy.of(() -> storage(settings));
    this.gemini = Lazy.of(() -> GeminiClients.create(settings));
    this.analyzer = Lazy.of(() -> new InvoiceAnalyzer(gemini.get(), settings.required(GeminiSetting.GEMINI_MODEL),
        models, InstantSource.system()));
    this.estimator = Lazy.of(() -> new CostEstimator(gemini.get(), settings.required(GeminiSetting.GEMINI_MODEL),
        prices.get(), models, InstantSource.system()));
    this.batchJobs = Lazy.of(() -> new BatchJobs(gemini.get(), settings.required(GeminiSetting.GEMINI_MODEL),
        settings.optional(GeminiSetting.GEMINI_WEBHOOK_URL), PipelineSettings.inlineMaxBytes(settings), models,
        new JobErrors(settings.optional(GeminiSetting.GEMINI_BASE_URL),
            settings.required(GeminiSetting.GEMINI_API_KEY),
            settings.seconds(GeminiSetting.GEMINI_TIMEOUT_SECONDS))));
    this.publisher =
        Lazy.of(() -> new MessagePublisher(settings.optional(PipelineSetting.PUBSUB_EMULATOR_HOST).orElse(null)));
  }

  static Clients instance() {
    return INSTANCE.get();
  }

  String projectId() {
    return settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT).orElseGet(ServiceOptions::getDefaultProjectId);
  }

  /** A topic setting as a full name: ids are resolved in this project. */
  String topic(Setting setting) {
    try {
      return Topics.fullName(projectId(), settings.required(setting));
    } catch (IllegalArgumentException e) {
      throw new InvalidSetting(setting, e.getMessage());
    }
  }

  /** Honours STORAGE_EMULATOR_HOST ({@code http://host:port}, scheme optional), with bounded calls. */
  private static Storage storage(Settings settings) {
    HttpTransportOptions transport = HttpTransportOptions.newBuilder()
        .setConnectTimeout(10_000)
        .setReadTimeout(30_000)
        .build();
    StorageOptions.Builder options = StorageOptions.http().setTransportOptions(transport);
    settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT).ifPresent(options::setProjectId);
    settings.optional(PipelineSetting.STORAGE_EMULATOR_HOST).ifPresent(host -> options
        .setHost(host.contains("://") ? host : "http://" + host)
        .setCredentials(NoCredentials.getInstance()));
    return options.build().getService();
  }
}
