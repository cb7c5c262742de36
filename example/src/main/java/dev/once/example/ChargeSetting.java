package dev.once.example;

import dev.once.config.Setting;

/** The example's own settings, beside the library's ({@link dev.once.config.OnceSetting}). */
public enum ChargeSetting implements Setting {
  PAYMENTS_URL(null, "the payment endpoint, charged once per Idempotency-Key"),
  PAYMENTS_TIMEOUT_SECONDS("10", "bound on one payment request, answer included");

  private final String defaultValue;
  private final String description;

  ChargeSetting(String defaultValue, String description) {
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
