package dev.once.config;

/**
 * Every environment variable the code reads: the public contract of DESIGN.md and README. Terraform's checks
 * compare this list with the variables the deployment sets, so a setting cannot be added on one side only.
 */
public enum Setting {
  GOOGLE_CLOUD_PROJECT(null, "project id; when unset, the client libraries' default project detection"),
  FIRESTORE_EMULATOR_HOST(null, "host:port of a Firestore emulator (local runs and tests only)"),
  PUBSUB_EMULATOR_HOST(null, "host:port of a Pub/Sub emulator (local runs and tests only)"),
  STORAGE_EMULATOR_HOST(null, "http://host:port of a Cloud Storage stand-in (scheme optional; local runs only)"),
  GEMINI_API_KEY(null, "Gemini API key (from Secret Manager when deployed)"),
  GEMINI_BASE_URL(null, "server root the Gemini client talks to instead of Google's, e.g. http://127.0.0.1:9090"),
  GEMINI_MODEL("gemini-2.5-flash", "model used for analysis and batch jobs"),
  GEMINI_WEBHOOK_SECRET(null, "one or more whsec_… secrets, blank-separated, for webhook signature rotation"),
  GEMINI_TIMEOUT_SECONDS("120", "bound on one Gemini call, retries included"),
  GEMINI_PRICES(null, "price table, model=input/output USD per million tokens, comma-separated; adds to the built-in one"),
  ONCE_COLLECTION("idempotency", "Firestore collection of the idempotency ledger"),
  ONCE_LEASE_SECONDS("600", "how long a claim holds before another delivery may take it over"),
  ONCE_RETENTION_DAYS("30", "days a finished record is kept (TTL on expireAt) to absorb late duplicates"),
  RESULTS_TOPIC(null, "topic for analysis results, as an id or projects/p/topics/t"),
  DEAD_LETTER_TOPIC(null, "topic for messages that cannot be delivered, as an id or projects/p/topics/t"),
  NOTIFY_URL(null, "HTTPS endpoint notified once per result"),
  NOTIFY_TIMEOUT_SECONDS("10", "bound on one notification request"),
  MAX_DOCUMENT_BYTES("14680064", "largest document analysed; 14 MiB keeps the base64 inline request under Gemini's 20 MB"),
  ANALYSIS_MODE("sync", "sync (generateContent per document) or batch (one batch job per document)");

  private final String defaultValue;
  private final String description;

  Setting(String defaultValue, String description) {
    this.defaultValue = defaultValue;
    this.description = description;
  }

  /** The value used when the variable is unset or blank, or null when there is none. */
  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }
}
