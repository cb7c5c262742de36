package dev.once.guard;

import dev.once.ledger.ResultCodec;
import dev.once.ledger.SideWrites;
import java.util.Map;

/**
 * What an effect hands back: its result, recorded on the ledger (and answered to every duplicate), and the Firestore
 * writes that commit in the same commit as that record.
 */
public record Completion(Map<String, Object> result, SideWrites writes) {
  /** A result with no writes beside it. */
  public static Completion of(Map<String, Object> result) {
    return new Completion(result, SideWrites.NONE);
  }

  public static Completion of(Map<String, Object> result, SideWrites writes) {
    return new Completion(result, writes);
  }

  /** A typed result, recorded as {@code codec} encodes it, with no writes beside it. */
  public static <T> Completion of(ResultCodec<T> codec, T result) {
    return of(codec, result, SideWrites.NONE);
  }

  /** A typed result, recorded as {@code codec} encodes it, with {@code writes} committed beside it. */
  public static <T> Completion of(ResultCodec<T> codec, T result, SideWrites writes) {
    return new Completion(codec.encode(result), writes);
  }

  /** This result, with {@code more} committed beside it too. */
  public Completion committing(SideWrites more) {
    return new Completion(result, writes.and(more));
  }
}
