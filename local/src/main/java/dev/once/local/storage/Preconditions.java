package dev.once.local.storage;

import dev.once.local.http.Request;
import dev.once.wire.http.HttpError;
import dev.once.wire.storage.StoredObject;

/**
 * The generation and metageneration preconditions of the JSON API. A failed precondition on a write is 412; on a
 * read, a matching {@code ifGenerationNotMatch} / {@code ifMetagenerationNotMatch} is 304, as GCS answers.
 */
record Preconditions(
    Long ifGenerationMatch, Long ifGenerationNotMatch, Long ifMetagenerationMatch, Long ifMetagenerationNotMatch) {

  static final Preconditions NONE = new Preconditions(null, null, null, null);

  static Preconditions from(Request request) {
    return new Preconditions(
        request.longQuery("ifGenerationMatch").orElse(null),
        request.longQuery("ifGenerationNotMatch").orElse(null),
        request.longQuery("ifMetagenerationMatch").orElse(null),
        request.longQuery("ifMetagenerationNotMatch").orElse(null));
  }

  /** Checks against {@code current} (null when no live version exists). */
  void check(StoredObject current, boolean read) {
    long generation = current == null ? 0 : current.generation();
    if (ifGenerationMatch != null && ifGenerationMatch != generation) {
      throw failed();
    }
    if (ifGenerationNotMatch != null && ifGenerationNotMatch == generation) {
      throw read ? notModified() : failed();
    }
    if (ifMetagenerationMatch != null && (current == null || ifMetagenerationMatch != current.metageneration())) {
      throw failed();
    }
    if (ifMetagenerationNotMatch != null && current != null && ifMetagenerationNotMatch == current.metageneration()) {
      throw read ? notModified() : failed();
    }
  }

  private static HttpError failed() {
    return new HttpError(412, "FAILED_PRECONDITION", "conditionNotMet",
        "At least one of the pre-conditions you specified did not hold.");
  }

  private static HttpError notModified() {
    return new HttpError(304, "NOT_MODIFIED", "notModified", "Not Modified");
  }
}
