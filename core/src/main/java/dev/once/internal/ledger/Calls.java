package dev.once.internal.ledger;

import dev.once.ledger.Call;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A record's tries as stored: its {@code calls} array, a map per try, oldest first, outcomes by their stored name. */
public final class Calls {
  private Calls() {}

  static List<Map<String, Object>> stored(List<Call> calls) {
    return calls.stream().map(Calls::stored).toList();
  }

  public static Map<String, Object> stored(Call call) {
    Map<String, Object> fields = new HashMap<>();
    fields.put("number", (long) call.number());
    fields.put("at", call.at());
    fields.put("outcome", call.outcome().stored());
    fields.put("error", call.error());
    return fields;
  }

  public static Call read(Map<?, ?> stored) {
    return new Call(stored.get("number") instanceof Number n ? n.intValue() : 0,
        stored.get("at") instanceof Instant at ? at : null,
        Call.Outcome.ofStored(stored.get("outcome")),
        stored.get("error") == null ? null : String.valueOf(stored.get("error")));
  }

  static List<Call> read(Object stored) {
    if (!(stored instanceof List<?> list)) {
      return List.of();
    }
    List<Call> calls = new ArrayList<>();
    for (Object item : list) {
      if (item instanceof Map<?, ?> call) {
        calls.add(read(call));
      }
    }
    return calls;
  }
}
