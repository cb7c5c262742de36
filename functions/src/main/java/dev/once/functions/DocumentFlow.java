package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.effects.DocumentSource;
import dev.once.effects.Records;
import dev.once.effects.ResultMessage;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.GeminiErrors;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.PermanentFailure;
import dev.once.key.IdempotencyKey;
import dev.once.key.StorageObjectKeys;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A document uploaded: validate it, then analyse it once (sync: generateContent; batch: submit one batch job),
 * recording the analysis and its bill in the same commit as the claim's completion, then publish the result
 * once. The pre-check reads the last effect's record only, so a duplicate costs one read and builds neither
 * the Storage nor the Gemini client.
 */
final class DocumentFlow {
  enum Mode { SYNC, BATCH }

  /** PDF and the image types Gemini reads. */
  static final Set<String> ACCEPTED_TYPES =
      Set.of("application/pdf", "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif");

  private final Once once;
  private final Supplier<Records> records;
  private final Supplier<DocumentReader> reader;
  private final Supplier<InvoiceAnalyzer> analyzer;
  private final Supplier<BatchJobs> batchJobs;
  private final ResultPublication publication;
  private final Mode mode;
  private final long maxBytes;

  DocumentFlow(Once once, Supplier<Records> records, Supplier<DocumentReader> reader, Supplier<InvoiceAnalyzer> analyzer,
      Supplier<BatchJobs> batchJobs, ResultPublication publication, Mode mode, long maxBytes) {
    this.once = once;
    this.records = records;
    this.reader = reader;
    this.analyzer = analyzer;
    this.batchJobs = batchJobs;
    this.publication = publication;
    this.mode = mode;
    this.maxBytes = maxBytes;
  }

  EventReport handle(DocumentSource document) {
    IdempotencyKey key = StorageObjectKeys.of(document.bucket(), document.name(), document.generation());
    return mode == Mode.SYNC ? analyseNow(key, document) : submitBatch(key, document);
  }

  private EventReport analyseNow(IdempotencyKey key, DocumentSource document) {
    Optional<Outcome> published = once.peek(key, Effects.PUBLISH, null);
    if (published.isPresent()) {
      return EventReport.of(key.value(), Effects.PUBLISH, published.get());
    }
    Outcome analysed = once.runCommitted(key, Effects.ANALYSE, document.fingerprint(), attempt -> analyse(key, document));
    EventReport report = EventReport.of(key.value(), Effects.ANALYSE, analysed);
    return publishResult(key, document, analysed, report);
  }

  private EventReport submitBatch(IdempotencyKey key, DocumentSource document) {
    Optional<Outcome> earlier = once.peek(key, Effects.SUBMIT, document.fingerprint());
    if (earlier.isPresent() && !(earlier.get() instanceof Outcome.Rejected)) {
      return EventReport.of(key.value(), Effects.SUBMIT, earlier.get());
    }
    Outcome submitted = earlier.isPresent()
        ? earlier.get()
        : once.runCommitted(key, Effects.SUBMIT, document.fingerprint(), attempt -> submit(key, document));
    EventReport report = EventReport.of(key.value(), Effects.SUBMIT, submitted);
    if (submitted instanceof Outcome.Rejected) {
      return publishResult(key, document, submitted, report); // the webhook never comes for a refused document
    }
    return report;
  }

  /** After the analysis (or its refusal) is recorded: publish it, unless it is still running elsewhere. */
  private EventReport publishResult(IdempotencyKey key, DocumentSource document, Outcome analysed, EventReport report) {
    Map<String, Object> summary = switch (analysed) {
      case Outcome.Processed processed -> processed.result();
      case Outcome.Duplicate duplicate -> duplicate.result();
      case Outcome.Rejected rejected -> ResultMessage.rejected(key, document, rejected.reason());
      case Outcome.InFlight inFlight -> null;
      case Outcome.Conflict conflict -> null;
    };
    if (summary == null) {
      return report;
    }
    return report.then(Effects.PUBLISH, publication.publish(key, summary));
  }

  private Completion analyse(IdempotencyKey key, DocumentSource document) throws PermanentFailure {
    byte[] content = readValid(key, document);
    Analysis analysis;
    try {
      analysis = analyzer.get().analyse(content, mimeType(document));
    } catch (RuntimeException e) {
      throw refusedByGemini(key, document, e);
    }
    return Completion.of(
        ResultMessage.analysed(key, document, analysis, null), records.get().analysed(key, document, analysis, null));
  }

  private Completion submit(IdempotencyKey key, DocumentSource document) throws PermanentFailure {
    byte[] content = readValid(key, document);
    BatchJob job;
    try {
      job = batchJobs.get().submit(key, content, mimeType(document));
    } catch (RuntimeException e) {
      throw refusedByGemini(key, document, e);
    }
    String name = job.name().orElseThrow(() -> new IllegalStateException("Gemini created a batch job without a name"));
    return Completion.of(Map.of("job", name), records.get().submitted(key, document, name));
  }

  /** A Gemini 400 blames the document (never retried); anything else is the moment's and is rethrown. */
  private RuntimeException refusedByGemini(IdempotencyKey key, DocumentSource document, RuntimeException e)
      throws PermanentFailure {
    if (GeminiErrors.isPermanent(e)) {
      String reason = GeminiErrors.describe(e);
      throw new PermanentFailure(reason, records.get().rejected(key, document, reason));
    }
    return e;
  }

  /** Checks what the event says before any paid call, then reads the generation itself within the limit. */
  private byte[] readValid(IdempotencyKey key, DocumentSource document) throws PermanentFailure {
    String refusal = refusal(document);
    if (refusal == null) {
      try {
        byte[] content = reader.get().read(document, maxBytes);
        if (content.length == 0) {
          refusal = "the document is empty";
        } else {
          return content;
        }
      } catch (DocumentReader.Gone | DocumentReader.TooLarge e) {
        refusal = e.getMessage();
      }
    }
    throw new PermanentFailure(refusal, records.get().rejected(key, document, refusal));
  }

  private String refusal(DocumentSource document) {
    String type = mimeType(document);
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

  static String mimeType(DocumentSource document) {
    String type = document.contentType() == null ? "" : document.contentType();
    int parameters = type.indexOf(';');
    return (parameters < 0 ? type : type.substring(0, parameters)).strip().toLowerCase(Locale.ROOT);
  }
}
