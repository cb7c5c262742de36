package dev.once.config;

import java.util.List;

/** The settings of the library itself: where the ledger is and how it behaves. */
public final class OnceSetting {
  public static final Setting GOOGLE_CLOUD_PROJECT = new Setting("GOOGLE_CLOUD_PROJECT", null,
      "project id; when unset, the client libraries' default project detection");
  public static final Setting FIRESTORE_EMULATOR_HOST = new Setting("FIRESTORE_EMULATOR_HOST", null,
      "host:port of a Firestore emulator (local runs and tests only)");
  public static final Setting ONCE_COLLECTION = new Setting("ONCE_COLLECTION", "idempotency",
      "Firestore collection of the idempotency ledger");
  public static final Setting ONCE_LEASE_SECONDS = new Setting("ONCE_LEASE_SECONDS", "60",
      "a claim's lease, renewed every third of it while its holder works: how soon a dead"
          + " holder's claim is taken over");
  public static final Setting ONCE_MAX_ATTEMPTS = new Setting("ONCE_MAX_ATTEMPTS", "5",
      "tries of a paid effect that may have been billed before the event is given up");
  public static final Setting ONCE_RETENTION_DAYS = new Setting("ONCE_RETENTION_DAYS", "30",
      "days a finished record is kept (TTL on expireAt) to absorb late duplicates");
  public static final Setting ONCE_BUDGET_TIMEZONE = new Setting("ONCE_BUDGET_TIMEZONE", null,
      "time zone (tz database name) whose midnight starts a spending budget's day, judged by"
          + " Firestore's clock (blank: UTC)");

  private OnceSetting() {}

  /** Every one, in order: what Terraform's checks compare with the deployment. */
  public static List<Setting> values() {
    return Setting.declaredIn(OnceSetting.class);
  }
}
