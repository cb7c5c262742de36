package dev.once.cli.stats;

import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Outcomes per effect, as the log-based metric counts them (labels {@code effect} and {@code outcome}), and the
 * table {@code once stats} prints: processed, duplicate, rejected, failed, deferred, and the duplicate rate, the
 * share of duplicate outcomes among all of the effect's.
 */
final class Counts {
  /** The columns, in the order an operator reads them. */
  static final List<OutcomeLabel> SHOWN = List.of(OutcomeLabel.PROCESSED, OutcomeLabel.DUPLICATE,
      OutcomeLabel.REJECTED, OutcomeLabel.FAILED, OutcomeLabel.DEFERRED);

  private final Map<String, Map<String, Long>> byEffect = new TreeMap<>(Counts::effectOrder);
  private final boolean duplicatesKnown;
  /** Failed deliveries (or records) whose error is Google refusing GEMINI_MODEL: what those documents wait for. */
  private long waitingForTheModel;

  /** @param duplicatesKnown false when the source cannot see absorbed duplicates (the ledger records none) */
  Counts(boolean duplicatesKnown) {
    this.duplicatesKnown = duplicatesKnown;
  }

  void add(String effect, String outcome, long n) {
    if (effect == null || outcome == null || n == 0) {
      return;
    }
    byEffect.computeIfAbsent(effect, e -> new LinkedHashMap<>()).merge(outcome, n, Long::sum);
  }

  void waitingForTheModel(long n) {
    waitingForTheModel += n;
  }

  long get(String effect, OutcomeLabel outcome) {
    return byEffect.getOrDefault(effect, Map.of()).getOrDefault(outcome.label(), 0L);
  }

  boolean isEmpty() {
    return byEffect.isEmpty();
  }

  void print(PrintWriter out) {
    StringBuilder header = new StringBuilder(String.format("  %-12s", "effect"));
    SHOWN.forEach(o -> header.append(String.format(" %10s", o.label())));
    header.append(String.format(" %9s  %s", "dup rate", "other"));
    out.println(header);
    byEffect.forEach((effect, outcomes) -> {
      StringBuilder row = new StringBuilder(String.format("  %-12s", effect));
      for (OutcomeLabel o : SHOWN) {
        row.append(String.format(" %10s", o == OutcomeLabel.DUPLICATE && !duplicatesKnown ? "—"
            : String.valueOf(outcomes.getOrDefault(o.label(), 0L))));
      }
      long all = outcomes.values().stream().mapToLong(Long::longValue).sum();
      long duplicates = outcomes.getOrDefault(OutcomeLabel.DUPLICATE.label(), 0L);
      row.append(String.format(" %9s", !duplicatesKnown || all == 0 ? "—"
          : String.format("%.1f %%", 100.0 * duplicates / all)));
      List<String> other = new ArrayList<>();
      outcomes.forEach((outcome, n) -> {
        if (SHOWN.stream().noneMatch(o -> o.label().equals(outcome))) {
          other.add(outcome + " " + n);
        }
      });
      row.append("  ").append(other.isEmpty() ? "" : String.join(", ", other));
      out.println(row.toString().stripTrailing());
    });
    if (waitingForTheModel > 0) {
      out.println("  " + waitingForTheModel + " of the failed met a model Google does not serve (Gemini answered 404):"
          + " their documents wait, redelivered; set GEMINI_MODEL to a model Google serves (once models), and each is"
          + " analysed once");
    }
  }

  /** The pipeline's effects in the order an event meets them, then any other name alphabetically. */
  private static int effectOrder(String a, String b) {
    int ia = Effects.ALL.indexOf(a);
    int ib = Effects.ALL.indexOf(b);
    if (ia >= 0 && ib >= 0) {
      return Integer.compare(ia, ib);
    }
    if (ia >= 0 || ib >= 0) {
      return ia >= 0 ? -1 : 1;
    }
    return a.compareTo(b);
  }
}
