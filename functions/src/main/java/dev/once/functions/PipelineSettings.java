package dev.once.functions;

import dev.once.config.InvalidSetting;
import dev.once.config.OnceSetting;
import dev.once.config.Setting;
import dev.once.config.Settings;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiSetting;
import dev.once.pipeline.HttpsOnly;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.RecordQueries;
import java.math.BigDecimal;
import java.net.URI;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.Optional;

/**
 * The pipeline's settings that need more than {@link Settings} checks, each read into its value or failing the
 * instance's start with the variable's name and what it must be: the bounds Google sets (a job's bytes, the jobs in
 * flight, inlined requests), money, a time zone, URLs, the mode.
 */
final class PipelineSettings {
  /** Gemini's concurrent batch jobs per project (ai.google.dev rate limits, Batch API). */
  static final int GEMINI_MAX_JOBS = 100;
  /**
   * The documents' bytes of one job: its input file holds them in base64, a third more, and each line its key, prompt
   * and schema (up to ~4 KB), under the Files API's 2 GB per file ("a per-file maximum size of 2 GB",
   * ai.google.dev/gemini-api/docs/files, read as 2,000,000,000 bytes): (2e9 − 5,000 × 4 KB) × 3/4 ≈ 1.485e9, less a
   * margin. A job that still would not fit is made of fewer documents (InputTooLarge).
   */
  static final long MAX_JOB_BYTES = 1_450_000_000;
  /** No day's budget above a million dollars: a typo, not a budget. */
  static final BigDecimal MAX_BUDGET_USD = BigDecimal.valueOf(1_000_000);

  private PipelineSettings() {}

  /** BATCH_INLINE_MAX_BYTES, at most {@link BatchJobs#DEFAULT_INLINE_MAX_BYTES} (Gemini's 20 MB, less a margin). */
  static long inlineMaxBytes(Settings settings) {
    long value = settings.positiveLong(PipelineSetting.BATCH_INLINE_MAX_BYTES);
    if (value > BatchJobs.DEFAULT_INLINE_MAX_BYTES) {
      throw new InvalidSetting(PipelineSetting.BATCH_INLINE_MAX_BYTES, "must be at most "
          + BatchJobs.DEFAULT_INLINE_MAX_BYTES + " (Gemini's 20 MB of inlined requests, less a margin), got " + value);
    }
    return value;
  }

  /** BATCH_MAX_DOCUMENTS: 1 to the most a job may hold. */
  static int batchMaxDocuments(Settings settings) {
    return atMost(settings, PipelineSetting.BATCH_MAX_DOCUMENTS, RecordQueries.MAX_DOCUMENTS_PER_JOB);
  }

  /** BATCH_MAX_BYTES: at most {@link #MAX_JOB_BYTES}. */
  static long batchMaxBytes(Settings settings) {
    long maxBytes = settings.positiveLong(PipelineSetting.BATCH_MAX_BYTES);
    if (maxBytes > MAX_JOB_BYTES) {
      throw new InvalidSetting(PipelineSetting.BATCH_MAX_BYTES, "must be at most " + MAX_JOB_BYTES
          + " (base64 makes a third more of them, under the Files API's 2 GB per input file), got " + maxBytes);
    }
    return maxBytes;
  }

  /** BATCH_MAX_WAIT_SECONDS: 0 or more. */
  static Duration batchMaxWait(Settings settings) {
    return Duration.ofSeconds(settings.wholeNumber(PipelineSetting.BATCH_MAX_WAIT_SECONDS, 0, Long.MAX_VALUE));
  }

  /** BATCH_MAX_JOBS_IN_FLIGHT: 1 to Gemini's concurrent jobs per project. */
  static int batchMaxJobsInFlight(Settings settings) {
    return atMost(settings, PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT, GEMINI_MAX_JOBS);
  }

  private static int atMost(Settings settings, Setting setting, int most) {
    return (int) settings.wholeNumber(setting, 1, most);
  }

  static long microUsd(String usd) {
    BigDecimal amount;
    try {
      amount = new BigDecimal(usd);
    } catch (NumberFormatException e) {
      amount = null;
    }
    if (amount == null || amount.signum() <= 0 || amount.compareTo(MAX_BUDGET_USD) > 0 || amount.scale() > 6) {
      throw new InvalidSetting(GeminiSetting.GEMINI_DAILY_BUDGET_USD, "must be an amount of US dollars above 0 and"
          + " at most " + MAX_BUDGET_USD + ", with at most 6 decimals (e.g. 25 or 0.50), got \"" + usd + "\"");
    }
    return amount.movePointRight(6).longValueExact();
  }

  static ZoneId budgetZone(Settings settings) {
    Optional<String> zone = settings.optional(OnceSetting.ONCE_BUDGET_TIMEZONE);
    try {
      return zone.map(ZoneId::of).orElse(ZoneOffset.UTC);
    } catch (DateTimeException e) {
      throw new InvalidSetting(OnceSetting.ONCE_BUDGET_TIMEZONE, "is not a time zone (a tz database name such as"
          + " Europe/Paris or Etc/UTC): \"" + zone.get() + "\"");
    }
  }

  /** GEMINI_WEBHOOK_URL, checked: batch jobs name it, and dynamic webhook tokens must name it exactly. */
  static Optional<String> webhookUrl(Settings settings) {
    Optional<String> url = settings.optional(GeminiSetting.GEMINI_WEBHOOK_URL);
    url.ifPresent(set -> httpUrl(settings, GeminiSetting.GEMINI_WEBHOOK_URL));
    return url;
  }

  static DocumentFlow.Mode mode(Settings settings) {
    String mode = settings.required(PipelineSetting.ANALYSIS_MODE).toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "sync" -> DocumentFlow.Mode.SYNC;
      case "batch" -> DocumentFlow.Mode.BATCH;
      default -> throw new InvalidSetting(PipelineSetting.ANALYSIS_MODE, "must be sync or batch, got \"" + mode + "\"");
    };
  }

  /** An https URL with a host (http only to this machine), or the start fails naming the setting. */
  static URI httpUrl(Settings settings, Setting setting) {
    String url = settings.required(setting);
    URI endpoint;
    try {
      endpoint = URI.create(url);
    } catch (IllegalArgumentException e) {
      endpoint = null;
    }
    if (!HttpsOnly.allows(endpoint)) {
      throw new InvalidSetting(setting, "is not an https URL with a host (http only to this machine: localhost,"
          + " 127.0.0.0/8, [::1]): \"" + url + "\"");
    }
    return endpoint;
  }

  /** RECORDS_RETENTION_DAYS: unset, the analyses and bills are kept; else 30 days to a century. */
  static Optional<Duration> recordsRetention(Settings settings) {
    if (settings.optional(PipelineSetting.RECORDS_RETENTION_DAYS).isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofDays(settings.wholeNumber(PipelineSetting.RECORDS_RETENTION_DAYS, 30, 36_500)));
  }
}
