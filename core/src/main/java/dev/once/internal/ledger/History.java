package dev.once.internal.ledger;

import dev.once.ledger.LedgerRecord.Invalidated;
import dev.once.ledger.RecordState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A record's invalidated runs as stored: its {@code history} array, a map per run, oldest first. */
final class History {
  /** Runs an invalidated record remembers at most (each holds its outcome: the record stays well under 1 MiB). */
  static final int KEPT = 10;

  private History() {}

  static List<Map<String, Object>> stored(List<Invalidated> runs) {
    return runs.stream().map(History::stored).toList();
  }

  private static Map<String, Object> stored(Invalidated run) {
    Map<String, Object> fields = new HashMap<>();
    fields.put("generation", (long) run.generation());
    fields.put("state", run.state().name());
    fields.put("outcome", run.outcome());
    fields.put("error", run.error());
    fields.put("attempts", (long) run.attempts());
    fields.put("finishedAt", run.finishedAt());
    fields.put("by", run.by());
    fields.put("at", run.at());
    fields.put("reason", run.reason());
    return fields;
  }

  @SuppressWarnings("unchecked")
  static List<Invalidated> read(Object stored) {
    List<Invalidated> runs = new ArrayList<>();
    if (stored instanceof List<?> list) {
      for (Object item : list) {
        if (item instanceof Map<?, ?> m) {
          runs.add(new Invalidated(m.get("generation") instanceof Number n ? n.intValue() : 0,
              RecordState.valueOf(String.valueOf(m.get("state"))),
              m.get("outcome") instanceof Map<?, ?> outcome ? (Map<String, Object>) outcome : Map.of(),
              text(m.get("error")), m.get("attempts") instanceof Number n ? n.intValue() : 0, time(m.get("finishedAt")),
              text(m.get("by")), time(m.get("at")), text(m.get("reason"))));
        }
      }
    }
    return runs;
  }

  private static String text(Object stored) {
    return stored == null ? null : String.valueOf(stored);
  }

  /** Every store gives times as Instants (the Firestore store converts its own at any depth). */
  private static Instant time(Object stored) {
    return stored instanceof Instant i ? i : null;
  }
}
