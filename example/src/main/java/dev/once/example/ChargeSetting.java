package dev.once.example;

import dev.once.config.Setting;

/** The example's own settings, beside the library's ({@link dev.once.config.OnceSetting}). */
public final class ChargeSetting {
  public static final Setting PAYMENTS_URL = new Setting("PAYMENTS_URL", null,
      "the payment endpoint, charged once per Idempotency-Key");
  public static final Setting PAYMENTS_TIMEOUT_SECONDS = new Setting("PAYMENTS_TIMEOUT_SECONDS", "10",
      "bound on one payment request, answer included");

  private ChargeSetting() {}
}
