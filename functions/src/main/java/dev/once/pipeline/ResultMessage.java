package dev.once.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.once.gemini.Analysis;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.observe.ForeignText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of one document as published on the results topic: small, and the same bytes every time it is
 * built from the same facts (keys sorted), so a copy published again after a crash is recognisably the same.
 * It is also what the analysis effect records as its outcome, so a redelivery can publish it without Gemini.
 */
public final class ResultMessage {
  private static final ObjectMapper JSON = new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
  private static final List<String> HEADLINE = List.of("supplier", "invoiceNumber", "issueDate", "currency", "total");
  /**
   * The most of a headline field's text (the model writes it) a published result holds: a completion chunk's ledger
   * record keeps 100 of them (CompletionFlow.CHUNK), so they are bounded well under Firestore's 1 MiB a document.
   */
  static final int MAX_HEADLINE_CHARS = 100;
  /** The most of a reason (Google's words, the model's answer quoted) a published result holds. */
  static final int MAX_REASON_CHARS = 300;

  private static String reason(String reason) {
    return ForeignText.cut(reason, MAX_REASON_CHARS);
  }

  private ResultMessage() {}

  public static Map<String, Object> analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis,
      String job) {
    return analysed(documentKey, source, analysis, job, 1);
  }

  /** Run {@code run} of the analysis: after the first, the result says which ({@code rerun}), and is published so. */
  public static Map<String, Object> analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis,
      String job, int run) {
    DocumentStatus status = analysis.succeeded() ? DocumentStatus.ANALYSED : DocumentStatus.FAILED;
    Map<String, Object> summary = base(documentKey, status, source);
    if (run > 1) {
      summary.put(Records.RERUN, (long) run);
    }
    if (analysis.succeeded()) {
      Map<String, Object> invoice = new LinkedHashMap<>();
      List<String> truncated = new ArrayList<>();
      for (String field : HEADLINE) {
        Object value = analysis.invoice().get(field);
        if (value instanceof String text && text.length() > MAX_HEADLINE_CHARS) {
          value = ForeignText.cut(text, MAX_HEADLINE_CHARS);
          truncated.add(field);
        } else if (analysis.truncated().contains(field)) {
          truncated.add(field);
        }
        if (value != null) {
          invoice.put(field, value);
        }
      }
      summary.put("invoice", invoice);
      if (!truncated.isEmpty()) {
        summary.put("truncated", truncated);
      }
    } else {
      summary.put("reason", reason(analysis.failure()));
    }
    summary.put("mode", job == null ? "sync" : "batch");
    if (job != null) {
      summary.put("job", job);
    }
    return summary;
  }

  public static Map<String, Object> rejected(IdempotencyKey documentKey, DocumentSource source, String reason) {
    Map<String, Object> summary = base(documentKey, DocumentStatus.REJECTED, source);
    summary.put("reason", reason(reason));
    return summary;
  }

  /** A document given up after its cap of paid tries (each may have been billed by Gemini, none answered). */
  public static Map<String, Object> gaveUp(IdempotencyKey documentKey, DocumentSource source, String reason) {
    Map<String, Object> summary = base(documentKey, DocumentStatus.FAILED, source);
    summary.put("reason", reason(reason));
    return summary;
  }

  /**
   * A document whose bytes an earlier one had: its own result says so and names the earlier one, whose result holds
   * the invoice ({@code duplicateOf}, {@code duplicateOfAnalysisId}). The same invoice uploaded twice is one invoice.
   */
  public static Map<String, Object> duplicate(IdempotencyKey documentKey, DocumentSource source,
      IdempotencyKey original) {
    Map<String, Object> summary = base(documentKey, DocumentStatus.DUPLICATE, source);
    summary.put("duplicateOf", original.value());
    summary.put("duplicateOfAnalysisId", original.documentId());
    return summary;
  }

  public static Map<String, Object> jobFailed(IdempotencyKey documentKey, String job, String reason) {
    return jobFailed(documentKey, job, reason, 1);
  }

  public static Map<String, Object> jobFailed(IdempotencyKey documentKey, String job, String reason, int run) {
    Map<String, Object> summary = base(documentKey, DocumentStatus.FAILED, null);
    if (run > 1) {
      summary.put(Records.RERUN, (long) run);
    }
    summary.put("reason", reason(reason));
    summary.put("mode", "batch");
    summary.put("job", job);
    return summary;
  }

  private static Map<String, Object> base(IdempotencyKey documentKey, DocumentStatus status, DocumentSource source) {
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("key", documentKey.value());
    summary.put("status", status.value());
    summary.put("analysisId", documentKey.documentId());
    if (source != null) {
      Map<String, Object> where = new LinkedHashMap<>();
      where.put("bucket", source.bucket());
      where.put("name", source.name());
      where.put("generation", source.generation());
      summary.put("source", where);
    }
    return summary;
  }

  /** Canonical JSON: sorted keys, so equal summaries give equal bytes. */
  public static byte[] json(Map<String, Object> summary) {
    try {
      return JSON.writeValueAsBytes(summary);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("result summary is not serialisable", e);
    }
  }

  /** The run of the analysis a result is of: 1, or the {@code rerun} it says. */
  public static int run(Map<String, Object> summary) {
    return summary.get(Records.RERUN) instanceof Number n ? Math.max(1, n.intValue()) : 1;
  }

  /** The attributes every published result carries: the document's key, for the receiver to drop copies. */
  public static Map<String, String> attributes(IdempotencyKey documentKey) {
    return Map.of(PubSubMessageKeys.ATTRIBUTE, documentKey.value());
  }
}
