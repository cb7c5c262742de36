package dev.once.config;

/** The settings of the library itself: where the ledger is and how it behaves. */
public enum OnceSetting implements Setting {
  GOOGLE_CLOUD_PROJECT(null, "project id; when unset, the client libraries' default project detection"),
  FIRESTORE_EMULATOR_HOST(null, "host:port of a Firestore emulator (local runs and tests only)"),
  ONCE_COLLECTION("idempotency", "Firestore collection of the idempotency ledger"),
  ONCE_LEASE_SECONDS("60", "a claim's lease, renewed every third of it while its holder works: how soon a dead"
      + " holder's claim is taken over"),
  ONCE_MAX_ATTEMPTS("5", "tries of a paid effect that may have been billed before the event is given up"),
  ONCE_RETENTION_DAYS("30", "days a finished record is kept (TTL on expireAt) to absorb late duplicates"),
  ONCE_BUDGET_TIMEZONE(null, "time zone (tz database name) whose midnight starts a spending budget's day, judged by"
      + " Firestore's clock (blank: UTC)");

  private final String defaultValue;
  private final String description;

  OnceSetting(String defaultValue, String description) {
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
