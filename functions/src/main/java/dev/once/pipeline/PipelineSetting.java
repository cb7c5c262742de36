package dev.once.pipeline;

import dev.once.config.Setting;

/**
 * The invoice pipeline's settings, beside the library's own ({@link dev.once.config.OnceSetting}). Terraform's checks
 * compare both lists with the variables the deployment sets.
 */
public enum PipelineSetting implements Setting {
  PUBSUB_EMULATOR_HOST(null, "host:port of a Pub/Sub emulator (local runs and tests only)"),
  STORAGE_EMULATOR_HOST(null, "http://host:port of a Cloud Storage stand-in (scheme optional; local runs only)"),
  GEMINI_API_KEY(null, "Gemini API key (from Secret Manager when deployed)"),
  GEMINI_BASE_URL(null, "server root the Gemini client talks to instead of Google's, e.g. http://127.0.0.1:9090"),
  GEMINI_MODEL("gemini-2.5-flash", "model used for analysis and batch jobs"),
  GEMINI_WEBHOOK_SECRET(null, "static webhooks: one or more whsec_… secrets, blank-separated (rotation); optional when"
      + " GEMINI_WEBHOOK_URL is set"),
  GEMINI_WEBHOOK_URL(null, "dynamic webhooks: the webhook function's own URL; batch jobs name it in webhook_config.uris"
      + " and the webhook accepts tokens made for it (exact match)"),
  GEMINI_WEBHOOK_JWKS_URL("https://generativelanguage.googleapis.com/.well-known/jwks.json",
      "where the keys of dynamic webhooks are published"),
  GEMINI_WEBHOOK_ISSUER("https://generativelanguage.googleapis.com",
      "iss of dynamic webhook tokens; Google does not document it, so a setting in case it differs"),
  GEMINI_TIMEOUT_SECONDS("60", "bound on one Gemini call, retries included; a paid call's lease outlasts it"),
  GEMINI_PRICES(null, "price table, model=input/output USD per million tokens, comma-separated; adds to the built-in one"),
  GEMINI_DAILY_BUDGET_USD(null, "the most Gemini calls may cost in one day, in US dollars (blank: no cap); each call"
      + " reserves its estimated cost first, and a document the day cannot take is deferred, not lost"),
  RESULTS_TOPIC(null, "topic for analysis results, as an id or projects/p/topics/t"),
  DEAD_LETTER_TOPIC(null, "topic for messages that cannot be delivered, as an id or projects/p/topics/t"),
  NOTIFY_URL(null, "HTTPS endpoint notified once per result"),
  NOTIFY_TIMEOUT_SECONDS("10", "bound on one notification request"),
  MAX_DOCUMENT_BYTES("14680064", "largest document analysed; 14 MiB keeps the base64 inline request under Gemini's 20 MB"),
  ANALYSIS_MODE("sync", "sync (generateContent per document) or batch (documents gathered into batch jobs)"),
  BATCH_MAX_DOCUMENTS("1000", "batch mode: documents per batch job, at most 5000 (a job is submitted when it is full)"),
  BATCH_MAX_BYTES("14680064", "batch mode: the documents' bytes per batch job; 14 MiB keeps the inlined requests under"
      + " Gemini's 20 MB (a job is submitted when it is full)"),
  BATCH_MAX_WAIT_SECONDS("300", "batch mode: a job is submitted once its oldest document has waited this long, full or"
      + " not (0: at once)"),
  BATCH_MAX_JOBS_IN_FLIGHT("90", "batch mode: batch jobs gathering, submitted or running at once, at most 100 (Gemini's"
      + " limit per project); more documents wait in the queue");

  private final String defaultValue;
  private final String description;

  PipelineSetting(String defaultValue, String description) {
    this.defaultValue = defaultValue;
    this.description = description;
  }

  @Override
  public String defaultValue() {
    return defaultValue;
  }

  @Override
  public String description() {
    return description;
  }
}
