package dev.once.guard;

import dev.once.ledger.SideWrites;
import java.util.Map;

/** What an effect whose target is Firestore hands back: its result, and the writes to commit with it. */
public record Completion(Map<String, Object> result, SideWrites writes) {
  public static Completion of(Map<String, Object> result, SideWrites writes) {
    return new Completion(result, writes);
  }
}
