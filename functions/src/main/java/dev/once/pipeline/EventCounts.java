package dev.once.pipeline;

import dev.once.entry.Report;

/**
 * The documents an event finished, on its log line: {@value #DOCUMENTS} given a result (analysed or failed) by this
 * event, and {@value #GIVEN_UP} of them given up (failed: tries used up, a batch job that gave no answer for them, an
 * answer holding no invoice; they are not tried again). A sync analysis finishes one, a batch job's completion all
 * its documents; duplicates and redeliveries finish none, so each document is counted once. The log-based metrics
 * of terraform/observability.tf sum them: documents completed per hour, and the share given up.
 */
public final class EventCounts {
  public static final String DOCUMENTS = "documents";
  public static final String GIVEN_UP = "givenUp";

  private EventCounts() {}

  public static Report finished(Report report, long documents, long givenUp) {
    return report.with(DOCUMENTS, documents).with(GIVEN_UP, givenUp);
  }
}
