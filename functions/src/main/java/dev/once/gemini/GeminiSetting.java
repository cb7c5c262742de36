package dev.once.gemini;

import dev.once.config.Setting;
import java.util.List;

/**
 * The settings of the pipeline's Gemini side: its key and server, the model, its webhooks, the bound on a call, its
 * prices and the day's budget. Part of the pipeline's list ({@code PipelineSetting.values()}), which Terraform's
 * checks compare with the variables the deployment sets; here so that this package needs nothing of the pipeline's.
 */
public final class GeminiSetting {
  public static final Setting GEMINI_API_KEY = new Setting("GEMINI_API_KEY", null,
      "Gemini API key (from Secret Manager when deployed)");
  public static final Setting GEMINI_BASE_URL = new Setting("GEMINI_BASE_URL", null,
      "server root the Gemini client talks to instead of Google's, e.g. http://127.0.0.1:9090");
  public static final Setting GEMINI_MODEL = new Setting("GEMINI_MODEL",
      GeminiModels.builtIn().defaultModel(), "model used for analysis and batch jobs; one Google shut"
          + " down fails the start (the built-in catalog: once models)");
  public static final Setting GEMINI_WEBHOOK_SECRET = new Setting("GEMINI_WEBHOOK_SECRET", null,
      "static webhooks: one or more whsec_… secrets, blank-separated (rotation); optional when"
          + " GEMINI_WEBHOOK_URL is set");
  public static final Setting GEMINI_WEBHOOK_URL = new Setting("GEMINI_WEBHOOK_URL", null,
      "dynamic webhooks: the webhook function's own URL; batch jobs name it in webhook_config.uris"
          + " and the webhook accepts tokens made for it (exact match)");
  public static final Setting GEMINI_WEBHOOK_JWKS_URL = new Setting("GEMINI_WEBHOOK_JWKS_URL",
      "https://generativelanguage.googleapis.com/.well-known/jwks.json",
      "where the keys of dynamic webhooks are published");
  public static final Setting GEMINI_WEBHOOK_ISSUER = new Setting("GEMINI_WEBHOOK_ISSUER",
      "https://generativelanguage.googleapis.com",
      "iss of dynamic webhook tokens; Google does not document it, so a setting in case it differs");
  public static final Setting GEMINI_TIMEOUT_SECONDS = new Setting("GEMINI_TIMEOUT_SECONDS", "60",
      "bound on one Gemini call, retries included; a paid call's lease outlasts it");
  public static final Setting GEMINI_PRICES = new Setting("GEMINI_PRICES", null,
      "prices, model=input/output USD per million tokens, optionally @YYYY-MM-DD for the day one takes effect,"
          + " comma-separated; a model named here is priced by these alone, others by the built-in catalog");
  public static final Setting GEMINI_DAILY_BUDGET_USD = new Setting("GEMINI_DAILY_BUDGET_USD", null,
      "the most Gemini calls may cost in one day, in US dollars (blank: no cap); each call"
          + " reserves its estimated cost first, and a document the day cannot take is deferred, not lost");

  private GeminiSetting() {}

  /** Every one, in order. */
  public static List<Setting> values() {
    return Setting.declaredIn(GeminiSetting.class);
  }
}
