package dev.once.functions.analysis;

import dev.once.key.IdempotencyKey;
import dev.once.pipeline.DocumentSource;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** One document's paid call, and what its log line says of it: {@code costMicroUsd}, {@code model}. */
final class PaidCall {
  final IdempotencyKey key;
  final DocumentSource document;
  final Instant deferredSince;
  final Map<String, Object> details = new LinkedHashMap<>();
  /** Deferred because its estimate alone is more than a whole day's budget. */
  boolean largerThanADay;
  /** Deferred until the first document of its bytes is analysed, or passes the content's claim on. */
  boolean waitingForContent;

  PaidCall(IdempotencyKey key, DocumentSource document, Instant deferredSince) {
    this.key = key;
    this.document = document;
    this.deferredSince = deferredSince;
  }
}
