package dev.once.functions.it;

import java.time.Duration;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * What one cell of the ambiguous-failure matrix measured, document by document, and its row of the table.
 *
 * @param faults the failures injected (each a call the other side carried out, whose caller saw an error)
 */
record MatrixTally(String call, String failure, int faults, List<Document> documents, Duration took) {
  /**
   * One document: {@code paid} Gemini calls that may have been billed (sync: generateContent tries; batch: jobs
   * created for it), {@code jobs} batch jobs named for it, billing entries, analyses (and their status), messages on
   * the results topic (copies included), requests the notify endpoint received for its key, and notifications the
   * pipeline recorded.
   */
  record Document(String key, int paid, int jobs, int bills, int analyses, String status, int publications,
      int notifyRequests, int notified) {}

  static final String HEADER = "| call | failure | documents | faults | Gemini paid calls | batch jobs | bills"
      + " | analyses | publications (copies) | notify requests | notified | time |\n"
      + "|---|---|---|---|---|---|---|---|---|---|---|---|";

  /** The row: per document, one figure when every document had the same, else the range and the sum. */
  String row() {
    return String.join(" | ", "| " + call, failure, String.valueOf(documents.size()), String.valueOf(faults),
        perDocument(Document::paid), perDocument(Document::jobs), perDocument(Document::bills),
        perDocument(Document::analyses), perDocument(Document::publications), perDocument(Document::notifyRequests),
        perDocument(Document::notified), String.format(Locale.ROOT, "%.1f s |", took.toMillis() / 1000.0));
  }

  private String perDocument(ToIntFunction<Document> figure) {
    IntSummaryStatistics stats = documents.stream().mapToInt(figure).summaryStatistics();
    if (stats.getMin() == stats.getMax()) {
      return String.valueOf(stats.getMin());
    }
    return stats.getMin() + "–" + stats.getMax() + " (Σ " + stats.getSum() + ")";
  }

  int sum(ToIntFunction<Document> figure) {
    return documents.stream().mapToInt(figure).sum();
  }
}
