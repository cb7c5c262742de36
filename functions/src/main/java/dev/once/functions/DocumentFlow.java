package dev.once.functions;

import com.google.genai.types.BatchJob;
import dev.once.function.Report;
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
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Records;
import dev.once.pipeline.ResultMessage;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A document uploaded: validate it, then analyse it once — the {@code analyse} effect, whichever the mode (sync:
 * generateContent, recording the analysis and its bill in the commit that completes the claim; batch: submit one
 * batch job, whose completion records them later) — then, in sync mode or for a refused document, publish the
 * result once. The pre-check reads the last record of the mode's chain only, so a duplicate costs one read and
 * builds neither the Storage nor the Gemini client.
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

  /** The document generation's key: {@code gcs:bucket/name#generation}. */
  static IdempotencyKey key(DocumentSource document) {
    return StorageObjectKeys.of(document.bucket(), document.name(), document.generation());
  }

  Report handle(DocumentSource document, IdempotencyKey key) {
    // The cheap check reads the last record of this mode's chain: a duplicate costs this one read.
    boolean sync = mode == Mode.SYNC;
    String lastEffect = sync ? Effects.PUBLISH : Effects.ANALYSE;
    Optional<Outcome> earlier = once.peek(key, lastEffect, sync ? null : document.fingerprint());
    if (earlier.isPresent() && (sync || !needsPublishing(earlier.get()))) {
      return Report.of(key, lastEffect, earlier.get());
    }
    // One effect for both modes, so a document whose deliveries land on a sync and a batch revision during a
    // change of ANALYSIS_MODE is still analysed (and paid for) once.
    boolean analysedBefore = !sync && earlier.isPresent();
    Outcome analysed = analysedBefore
        ? earlier.get()
        : once.runCommitted(key, Effects.ANALYSE, document.fingerprint(),
            attempt -> sync ? analyse(key, document) : submit(key, document));
    Report report = Report.of(key, Effects.ANALYSE, analysed);
    Map<String, Object> summary = switch (analysed) {
      case Outcome.Processed processed -> isSubmission(processed.result()) ? null : processed.result();
      case Outcome.Duplicate duplicate -> isSubmission(duplicate.result()) ? null : duplicate.result();
      // The webhook never comes for a refused document: its refusal is published at once.
      case Outcome.Rejected rejected -> ResultMessage.rejected(key, document, rejected.reason());
      case Outcome.InFlight inFlight -> null;
      case Outcome.Conflict conflict -> null;
    };
    if (summary == null) {
      return report;
    }
    // Analysed before: most likely published before too, which one read tells, without a claim's failed write.
    Outcome published = analysedBefore
        ? once.peek(key, Effects.PUBLISH).orElseGet(() -> publication.publish(key, summary))
        : publication.publish(key, summary);
    return report.then(Effects.PUBLISH, published);
  }

  /** A finished analysis still to be published: a refusal, or an analysis made in sync mode. */
  private static boolean needsPublishing(Outcome analysed) {
    return analysed instanceof Outcome.Rejected
        || analysed instanceof Outcome.Duplicate duplicate && !isSubmission(duplicate.result());
  }

  /** The outcome of a batch submission (its job), as opposed to a result, which always has a status. */
  private static boolean isSubmission(Map<String, Object> outcome) {
    return outcome.containsKey("job") && !outcome.containsKey("status");
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
    return Completion.of(Map.of("job", name, "mode", "batch"), records.get().submitted(key, document, name));
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
