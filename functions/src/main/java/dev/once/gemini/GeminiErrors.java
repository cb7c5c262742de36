package dev.once.gemini;

import com.google.genai.errors.ApiException;

/**
 * Which Gemini failures are the document's fault (never retry) and which are the moment's (retry). Only a 413, or
 * a 400 INVALID_ARGUMENT that is not about the API key, blames the request. The Gemini API answers a bad or
 * expired key with 400 INVALID_ARGUMENT ("API key not valid", reason API_KEY_INVALID) and a project or region
 * it cannot serve with 400 FAILED_PRECONDITION: those, like 401/403, an unknown model (404), quota (429) and
 * server errors, are configuration or capacity problems a later delivery may not have, so no document is lost
 * to them.
 */
public final class GeminiErrors {
  private GeminiErrors() {}

  public static boolean isPermanent(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api) {
        return api.code() == 413 || (api.code() == 400 && "INVALID_ARGUMENT".equals(api.status()) && !aboutTheKey(api));
      }
    }
    return false;
  }

  private static boolean aboutTheKey(ApiException api) {
    String message = String.valueOf(api.message()).toLowerCase(java.util.Locale.ROOT);
    return message.contains("api key") || message.contains("api_key");
  }

  public static String describe(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api) {
        return "Gemini answered " + api.code() + " " + api.status() + ": " + api.message();
      }
    }
    return error.getClass().getSimpleName() + ": " + error.getMessage();
  }
}
