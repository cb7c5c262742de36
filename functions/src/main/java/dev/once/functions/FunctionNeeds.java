package dev.once.functions;

import dev.once.config.OnceSetting;
import dev.once.config.Setting;
import dev.once.gemini.GeminiSetting;
import dev.once.pipeline.PipelineSetting;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What each function's handler uses, and so all a deployment may give it: the settings it reads (each function reads
 * its settings when it starts, {@link Wiring}; {@code FunctionNeedsTest} starts each with these alone and every other setting
 * invalid), which of them are secrets, whether it writes Firestore or only reads it, the topics it publishes to, and
 * whether it reads the inbox. terraform/check's PrivilegeCheck fails when a function's environment, secrets or roles
 * exceed this.
 */
public final class FunctionNeeds {
  /** Firestore access: the webhook reads one record a delivery; the others claim, complete and record. */
  public enum Firestore {
    READ, READ_WRITE
  }

  /**
   * @param settings every setting the function may read (the library's own, which all read, included)
   * @param secrets those of them that come from Secret Manager
   * @param publishesTo the topic settings whose topics it publishes to
   */
  public record Function(String entryPoint, Set<String> settings, Set<String> secrets, Firestore firestore,
      Set<String> publishesTo, boolean readsInbox) {}

  /** The settings that are secrets: from Secret Manager when deployed, never a plain variable. */
  public static final Set<String> SECRETS = Set.of(GeminiSetting.GEMINI_API_KEY.name(),
      GeminiSetting.GEMINI_WEBHOOK_SECRET.name(), PipelineSetting.NOTIFY_SIGNING_SECRET.name(),
      PipelineSetting.RESULTS_SIGNING_KEY.name());

  /** Read by every function: the library's settings and the Pub/Sub emulator's address. */
  private static final List<Setting> EVERY = Stream.concat(OnceSetting.values().stream(),
      Stream.of(PipelineSetting.PUBSUB_EMULATOR_HOST)).toList();
  private static final List<Setting> GEMINI = List.of(GeminiSetting.GEMINI_API_KEY, GeminiSetting.GEMINI_BASE_URL,
      GeminiSetting.GEMINI_MODEL, GeminiSetting.GEMINI_TIMEOUT_SECONDS, GeminiSetting.GEMINI_PRICES,
      // batch jobs are made and read with the webhook's URL and the inline limit (Clients.batchJobs)
      GeminiSetting.GEMINI_WEBHOOK_URL, PipelineSetting.BATCH_INLINE_MAX_BYTES);
  /** Those that publish results also write the analyses and bills (their retention). */
  private static final List<Setting> RESULTS =
      List.of(PipelineSetting.RESULTS_TOPIC, PipelineSetting.RESULTS_SIGNING_KEY,
          PipelineSetting.RECORDS_RETENTION_DAYS);
  private static final List<Setting> ANALYSIS = List.of(PipelineSetting.STORAGE_EMULATOR_HOST,
      GeminiSetting.GEMINI_DAILY_BUDGET_USD, PipelineSetting.MAX_DOCUMENT_BYTES, PipelineSetting.ANALYSIS_MODE,
      PipelineSetting.BATCH_MAX_DOCUMENTS, PipelineSetting.BATCH_MAX_BYTES, PipelineSetting.BATCH_MAX_WAIT_SECONDS,
      PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT);

  private static final Map<String, Function> ALL = new LinkedHashMap<>();

  static {
    add(DocumentUploaded.class, Firestore.READ_WRITE, List.of(PipelineSetting.RESULTS_TOPIC), true,
        GEMINI, RESULTS, ANALYSIS);
    add(MessageDelivered.class, Firestore.READ_WRITE, List.of(PipelineSetting.DEAD_LETTER_TOPIC), false,
        List.of(PipelineSetting.NOTIFY_URL, PipelineSetting.NOTIFY_TIMEOUT_SECONDS,
            PipelineSetting.NOTIFY_SIGNING_SECRET,
            PipelineSetting.RESULTS_SIGNING_KEY, PipelineSetting.DEAD_LETTER_TOPIC));
    add(GeminiWebhook.class, Firestore.READ, List.of(PipelineSetting.BATCH_COMPLETIONS_TOPIC), false,
        List.of(GeminiSetting.GEMINI_WEBHOOK_SECRET, GeminiSetting.GEMINI_WEBHOOK_URL,
            GeminiSetting.GEMINI_WEBHOOK_JWKS_URL, GeminiSetting.GEMINI_WEBHOOK_ISSUER,
            PipelineSetting.BATCH_COMPLETIONS_TOPIC));
    add(BatchCompleted.class, Firestore.READ_WRITE, List.of(PipelineSetting.RESULTS_TOPIC), false, GEMINI, RESULTS);
    add(GeminiReconciler.class, Firestore.READ_WRITE, List.of(PipelineSetting.RESULTS_TOPIC), true,
        GEMINI, RESULTS, ANALYSIS);
  }

  private FunctionNeeds() {}

  @SafeVarargs
  private static void add(Class<?> entryPoint, Firestore firestore, List<Setting> publishesTo, boolean readsInbox,
      List<Setting>... settings) {
    Set<String> names = new LinkedHashSet<>();
    EVERY.forEach(s -> names.add(s.name()));
    for (List<Setting> group : settings) {
      group.forEach(s -> names.add(s.name()));
    }
    Set<String> secrets = new LinkedHashSet<>();
    for (String name : names) {
      if (SECRETS.contains(name)) {
        secrets.add(name);
      }
    }
    ALL.put(entryPoint.getName(), new Function(entryPoint.getName(), Set.copyOf(names), Set.copyOf(secrets), firestore,
        Set.copyOf(publishesTo.stream().map(Setting::name).toList()), readsInbox));
  }

  /** Every deployed function, by entry point class name ({@code dev.once.functions.GeminiWebhook}). */
  public static Map<String, Function> all() {
    return Map.copyOf(ALL);
  }
}
