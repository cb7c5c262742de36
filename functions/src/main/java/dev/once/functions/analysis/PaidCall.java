package dev.once.functions.analysis;

import dev.once.guard.Refusal;
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

  /** The document's bytes read before its claim, or null. */
  private byte[] content;
  /** Its refusal found before its claim (a type, a size, gone, empty), or null. */
  private Refusal refused;

  PaidCall(IdempotencyKey key, DocumentSource document, Instant deferredSince) {
    this.key = key;
    this.document = document;
    this.deferredSince = deferredSince;
  }

  /**
   * Reads and checks the document before its claim, so the claim's commit can name it the first of its bytes: its
   * bytes, or null when it is refused (the claim's holder records that) or could not be read (read again under the
   * claim).
   */
  byte[] readBeforeClaim(DocumentChecks checks) {
    try {
      content = checks.readValid(key, document);
    } catch (Refusal e) {
      refused = e.is(Refusal.Kind.PERMANENT) ? e : null;
    }
    return content;
  }

  /** The document's valid bytes, as read before the claim or now; its refusal, as found before or now. */
  byte[] content(DocumentChecks checks) throws Refusal {
    if (refused != null) {
      throw refused;
    }
    return content != null ? content : checks.readValid(key, document);
  }
}
