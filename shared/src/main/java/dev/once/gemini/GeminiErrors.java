package dev.once.gemini;

import com.google.genai.errors.ApiException;

/**
 * Which Gemini failures are the document's fault (never retry) and which are the moment's (retry). Only a 400
 * or 413 blames the request; a bad key (401/403), an unknown model (404), quota (429) and server errors are
 * configuration or capacity problems that a later delivery may not have, so the document is not lost to them.
 */
public final class GeminiErrors {
  private GeminiErrors() {}

  public static boolean isPermanent(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api) {
        return api.code() == 400 || api.code() == 413;
      }
    }
    return false;
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
