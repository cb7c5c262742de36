package dev.once.functions.analysis;

import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.RecordWrites;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What the pipeline takes of an upload, checked before any paid call: a type Gemini reads, a size within the limit
 * and not empty, by what the event says and then by the generation read. A refusal is permanent, and recorded.
 */
final class DocumentChecks {
  /** PDF and the image types Gemini reads. */
  static final Set<String> ACCEPTED_TYPES =
      Set.of("application/pdf", "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif");

  private final Supplier<RecordWrites> records;
  private final Supplier<DocumentReader> reader;
  private final long maxBytes;

  DocumentChecks(Supplier<RecordWrites> records, Supplier<DocumentReader> reader, long maxBytes) {
    this.records = records;
    this.reader = reader;
    this.maxBytes = maxBytes;
  }

  /** Checks what the event says before any paid call, then reads the generation itself within the limit. */
  byte[] readValid(IdempotencyKey key, DocumentSource document) throws Refusal {
    refuseEarly(key, document);
    String refusal;
    try {
      byte[] content = reader.get().read(document, maxBytes);
      if (content.length != 0) {
        return content;
      }
      refusal = "the document is empty";
    } catch (DocumentReader.Gone | DocumentReader.TooLarge e) {
      refusal = e.getMessage();
    } catch (RuntimeException e) {
      // Nothing was paid for yet: this try does not count against the cap.
      throw Refusal.notPerformed("could not read the document: " + e.getMessage(), e);
    }
    throw Refusal.permanent(refusal, records.get().rejected(key, document, refusal));
  }

  /** What the event itself tells: a type, a size the pipeline refuses. */
  private void refuseEarly(IdempotencyKey key, DocumentSource document) throws Refusal {
    String refusal = refusal(document);
    if (refusal != null) {
      throw Refusal.permanent(refusal, records.get().rejected(key, document, refusal));
    }
  }

  private String refusal(DocumentSource document) {
    String type = document.mimeType();
    if (!ACCEPTED_TYPES.contains(type)) {
      return "content type \"" + (document.contentType() == null ? "" : document.contentType())
          + "\" is not accepted (accepted: " + String.join(", ", ACCEPTED_TYPES.stream().sorted().toList()) + ")";
    }
    if (document.size() == 0) {
      return "the document is empty";
    }
    if (document.size() > maxBytes) {
      return "the document is " + document.size() + " bytes, over the limit of " + maxBytes;
    }
    return null;
  }
}
