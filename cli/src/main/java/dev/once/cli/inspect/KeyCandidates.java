package dev.once.cli.inspect;

import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The keys an operator may mean by what they typed: the text itself (a {@code gcs:…}, {@code pubsub:…} or a
 * producer's key), a {@code gs://bucket/name#generation} URL as the {@code gcs:} key, and a Gemini batch job in
 * any spelling the webhook or the API use, folded as the pipeline folds it.
 */
public final class KeyCandidates {
  private KeyCandidates() {}

  /** Whether the text may be a log line's {@code keyHash} (16 hex digits), or the whole SHA-256 of a key. */
  public static boolean isLogHash(String typed) {
    return typed.strip().matches("[0-9a-f]{" + IdempotencyKey.LOG_HASH_CHARS + "}|[0-9a-f]{64}");
  }

  public static List<IdempotencyKey> of(String typed) {
    String text = typed.strip();
    Set<IdempotencyKey> keys = new LinkedHashSet<>();
    if (text.startsWith("gs://")) {
      add(keys, "gcs:" + text.substring("gs://".length()));
    }
    add(keys, text);
    String job = text.startsWith("gemini:") ? text.substring("gemini:".length()) : text;
    try {
      keys.add(GeminiCompletionKeys.ofName(job));
    } catch (InvalidKey notAJob) {
      // not a Gemini job name in any spelling
    }
    return List.copyOf(keys);
  }

  private static void add(Set<IdempotencyKey> keys, String value) {
    try {
      keys.add(IdempotencyKey.of(value));
    } catch (InvalidKey e) {
      // not a key (blank, too long): the other spellings may still be
    }
  }
}
