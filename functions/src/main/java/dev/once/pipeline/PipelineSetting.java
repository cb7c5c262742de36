package dev.once.pipeline;

import dev.once.config.Setting;
import dev.once.gemini.GeminiSetting;
import java.util.List;
import java.util.stream.Stream;

/**
 * The invoice pipeline's settings, beside the library's own ({@link dev.once.config.OnceSetting}). Terraform's checks
 * compare both lists with the variables the deployment sets.
 */
public final class PipelineSetting {
  public static final Setting PUBSUB_EMULATOR_HOST = new Setting("PUBSUB_EMULATOR_HOST", null,
      "host:port of a Pub/Sub emulator (local runs and tests only)");
  public static final Setting STORAGE_EMULATOR_HOST = new Setting("STORAGE_EMULATOR_HOST", null,
      "http://host:port of a Cloud Storage stand-in (scheme optional; local runs only)");
  public static final Setting RESULTS_TOPIC = new Setting("RESULTS_TOPIC", null,
      "topic for analysis results, as an id or projects/p/topics/t");
  public static final Setting BATCH_COMPLETIONS_TOPIC = new Setting("BATCH_COMPLETIONS_TOPIC", null,
      "topic through which the webhook hands finished batch jobs to BatchCompleted, as an id"
          + " or projects/p/topics/t");
  public static final Setting DEAD_LETTER_TOPIC = new Setting("DEAD_LETTER_TOPIC", null,
      "topic for messages that cannot be delivered, as an id or projects/p/topics/t");
  public static final Setting NOTIFY_URL = new Setting("NOTIFY_URL", null,
      "HTTPS endpoint notified once per result (http only to this machine: localhost, 127.0.0.0/8, [::1])");
  public static final Setting NOTIFY_SIGNING_SECRET = new Setting("NOTIFY_SIGNING_SECRET", null,
      "one or more whsec_… secrets, blank-separated (rotation), that sign every notification as Standard Webhooks"
          + " (webhook-id, webhook-timestamp, webhook-signature); from Secret Manager when deployed");
  public static final Setting RESULTS_SIGNING_KEY = new Setting("RESULTS_SIGNING_KEY", null,
      "one or more whsec_… keys, blank-separated (rotation): every published result carries their HMAC, and"
          + " MessageDelivered notifies only results that carry one; from Secret Manager when deployed");
  public static final Setting RECORDS_RETENTION_DAYS = new Setting("RECORDS_RETENTION_DAYS", null,
      "how long the analyses and billing documents (invoice data) are kept, in days, at least 30: each carries"
          + " expireAt for a Firestore TTL (blank: kept)");
  public static final Setting NOTIFY_TIMEOUT_SECONDS = new Setting("NOTIFY_TIMEOUT_SECONDS", "10",
      "bound on one notification request");
  public static final Setting MAX_DOCUMENT_BYTES = new Setting("MAX_DOCUMENT_BYTES", "14680064",
      "largest document analysed; 14 MiB keeps the base64 inline request under Gemini's 20 MB");
  public static final Setting ANALYSIS_MODE = new Setting("ANALYSIS_MODE", "sync",
      "sync (generateContent per document) or batch (documents gathered into batch jobs)");
  public static final Setting BATCH_MAX_DOCUMENTS = new Setting("BATCH_MAX_DOCUMENTS", "1000",
      "batch mode: documents per batch job, at most 5000 (a job is submitted when it is full)");
  public static final Setting BATCH_MAX_BYTES = new Setting("BATCH_MAX_BYTES", "52428800",
      "batch mode: the documents' bytes per batch job, at most 1450000000 (a job is submitted"
          + " when it is full); a job over BATCH_INLINE_MAX_BYTES goes through an input file, and its submission holds about"
          + " 2.5 times this in memory");
  public static final Setting BATCH_INLINE_MAX_BYTES = new Setting("BATCH_INLINE_MAX_BYTES", "19000000",
      "batch mode: the most a job's requests may take inlined, at most 19000000 (Gemini's"
          + " 20 MB, less a margin); a larger job is made from a JSONL input file of the Files API");
  public static final Setting BATCH_MAX_WAIT_SECONDS = new Setting("BATCH_MAX_WAIT_SECONDS", "300",
      "batch mode: a job is submitted once its oldest document has waited this long, full or"
          + " not (0: at once)");
  public static final Setting BATCH_MAX_JOBS_IN_FLIGHT = new Setting("BATCH_MAX_JOBS_IN_FLIGHT", "90",
      "batch mode: batch jobs gathering, submitted or running at once, at most 100 (Gemini's"
          + " limit per project); more documents wait in the queue");

  private PipelineSetting() {}

  /** Every one, Gemini's ({@link GeminiSetting}) last: what Terraform's checks compare with the deployment. */
  public static List<Setting> values() {
    return Stream.concat(Setting.declaredIn(PipelineSetting.class).stream(),
        GeminiSetting.values().stream()).toList();
  }
}
