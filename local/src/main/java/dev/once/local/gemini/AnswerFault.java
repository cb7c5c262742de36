package dev.once.local.gemini;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * What a finished job's answers can look like besides what Google's docs promise (each inlined response with its
 * request's {@code metadata}, in request order): what users of Google's SDKs report, to be made per job.
 */
public enum AnswerFault {
  /** Out of request order (googleapis/python-genai#1909: "observed with 10K+ requests"; PR #2124 works around it). */
  SHUFFLED,
  /**
   * Inlined responses without their request's {@code metadata} (googleapis/python-genai#2008, googleapis/js-genai#1191:
   * "the backend just hasn't implemented it"). A responses file keeps its lines' {@code key}s.
   */
  NO_METADATA,
  /**
   * The first two answers filed under each other's key (inlined metadata, or a responses file line's {@code key}):
   * "The response from one key wrongly put into another key" (googleapis/python-genai#1909).
   */
  MISFILED,
  /**
   * A job that ends FAILED, EXPIRED or CANCELLED having answered the first half of its requests (rounded up), which
   * its output holds; without this fault such a job answers nothing.
   */
  PARTIAL,
  /**
   * The first half of its requests (rounded up) answered with a retryable error, google.rpc code 13 "An internal
   * error has occurred. Please retry…" (googleapis/python-genai#1341: up to half of a job), in place of their answers.
   */
  INTERNAL_ERRORS;

  /** {@code shuffled,no-metadata,misfiled,partial,internal-errors} (any case, {@code -} or {@code _}); blank: none. */
  public static Set<AnswerFault> parse(String text) {
    Set<AnswerFault> faults = EnumSet.noneOf(AnswerFault.class);
    for (String part : text.split(",")) {
      if (!part.isBlank()) {
        faults.add(valueOf(part.strip().toUpperCase(Locale.ROOT).replace('-', '_')));
      }
    }
    return faults;
  }
}
