package dev.once.gemini;

import dev.once.observe.ForeignText;
import java.util.Locale;

/**
 * Gemini's error for one request of a batch job (a {@code google.rpc.Status} in an inlined response or a responses
 * file line): its code, read as sync mode reads the same failure of generateContent ({@link GeminiErrors}). A code
 * below 100 is a google.rpc code (13 is INTERNAL: googleapis/python-genai#1341); a code of 100 or more is taken as
 * the HTTP status it would have had.
 *
 * @param message Google's words, bounded ({@link GeminiErrors#MAX_DESCRIPTION_CHARS})
 */
public record BatchError(int code, String status, String message) {
  public BatchError {
    message = message == null ? "" : ForeignText.cut(message, GeminiErrors.MAX_DESCRIPTION_CHARS);
    status = status != null && !status.isBlank() ? status.strip().toUpperCase(Locale.ROOT) : statusOf(code);
  }

  /** The HTTP status the same failure of a generateContent would have had. */
  public int httpCode() {
    if (code >= 100) {
      return code;
    }
    return switch (code) {
      case 3, 9, 11 -> 400; // INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE
      case 16 -> 401;
      case 7 -> 403;
      case 5 -> 404;
      case 6, 10 -> 409;
      case 8 -> 429;
      case 1 -> 499;
      case 14 -> 503;
      case 4 -> 504;
      default -> 500; // 2 UNKNOWN, 12 UNIMPLEMENTED, 13 INTERNAL, 15 DATA_LOSS, anything else
    };
  }

  /**
   * The document's own fault (Google will refuse it whatever it is sent with), by the rule sync mode applies to a
   * generateContent failure ({@link GeminiErrors#isPermanent(int, String, String)}); anything else — an internal
   * error, an overload, a quota, a configuration fault — is retried in another job.
   */
  public boolean documentsFault() {
    return GeminiErrors.isPermanent(httpCode(), status, message);
  }

  /** An outage's failure, whoever sends it: an internal error, an overload, a quota, a deadline. */
  public boolean transientFailure() {
    int http = httpCode();
    return http == 429 || http == 408 || http >= 500;
  }

  public String describe() {
    return "Gemini answered its request " + code + " " + status + ": " + message;
  }

  /** The canonical name of a google.rpc code (google/rpc/code.proto); for an HTTP status, the usual one. */
  static String statusOf(int code) {
    return switch (code) {
      case 1 -> "CANCELLED";
      case 3, 400 -> "INVALID_ARGUMENT";
      case 4, 504 -> "DEADLINE_EXCEEDED";
      case 5, 404 -> "NOT_FOUND";
      case 6, 409 -> "ALREADY_EXISTS";
      case 7, 403 -> "PERMISSION_DENIED";
      case 8, 429 -> "RESOURCE_EXHAUSTED";
      case 9 -> "FAILED_PRECONDITION";
      case 10 -> "ABORTED";
      case 11 -> "OUT_OF_RANGE";
      case 12, 501 -> "UNIMPLEMENTED";
      case 13, 500 -> "INTERNAL";
      case 14, 503 -> "UNAVAILABLE";
      case 15 -> "DATA_LOSS";
      case 16, 401 -> "UNAUTHENTICATED";
      default -> "UNKNOWN";
    };
  }
}
