package dev.once.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.once.gemini.Analysis;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.ledger.ResultCodec;
import dev.once.observe.ForeignText;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of one document as published on the results topic: small, and the same bytes every time it is built
 * from the same facts (keys sorted), so a copy published again after a crash is recognisably the same. It is also
 * what the analysis effect records as its outcome ({@link #CODEC}: the one place its field names are spelled), so a
 * redelivery can publish it without Gemini.
 *
 * @param status the {@link DocumentStatus}'s value, kept as written: a status a later version wrote reads back and is
 *     published again unchanged
 * @param source where the document was (null: a job's failure names no object)
 * @param run the run of the analysis (1; after an operator's deliberate re-run, that run's number, as {@code rerun})
 * @param invoice the headline the model wrote, each text bounded (null: not analysed)
 * @param truncated the headline fields cut to their bound, by us or by the model's answer's bounds
 * @param reason why it failed or was refused, bounded (null: analysed or a duplicate)
 * @param mode {@code sync} or {@code batch} for an analysis or a job's failure (null: refused, given up, a duplicate)
 * @param job the batch job's name (null: none)
 * @param duplicateOf the earlier document whose bytes this one has (null: none)
 */
public record ResultMessage(IdempotencyKey key, String status, Where source, int run,
    Map<String, Object> invoice, List<String> truncated, String reason, String mode, String job,
    IdempotencyKey duplicateOf) {

  /** The object a result is of. */
  public record Where(String bucket, String name, long generation) {
    static Where of(DocumentSource source) {
      return source == null ? null : new Where(source.bucket(), source.name(), source.generation());
    }
  }

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
  private static final List<String> HEADLINE = List.of("supplier", "invoiceNumber", "issueDate", "currency", "total");
  /**
   * The most of a headline field's text (the model writes it) a published result holds: a completion chunk's ledger
   * record keeps 100 of them (CompletionFlow.CHUNK), so they are bounded well under Firestore's 1 MiB a document.
   */
  static final int MAX_HEADLINE_CHARS = 100;
  /** The most of a reason (Google's words, the model's answer quoted) a published result holds. */
  static final int MAX_REASON_CHARS = 300;

  /** The message as its fields, recorded on the ledger and published as JSON; read back from any version's record. */
  public static final ResultCodec<ResultMessage> CODEC = new ResultCodec<>() {
    public Map<String, Object> encode(ResultMessage message) {
      return message.fields();
    }

    public ResultMessage decode(Map<String, Object> fields) {
      return ResultMessage.decode(fields);
    }
  };

  public ResultMessage {
    invoice = invoice == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(invoice));
    truncated = List.copyOf(truncated);
  }

  public static ResultMessage analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis,
      String job) {
    return analysed(documentKey, source, analysis, job, 1);
  }

  /** Run {@code run} of the analysis: after the first, the result says which ({@code rerun}), and is published so. */
  public static ResultMessage analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis,
      String job, int run) {
    String mode = job == null ? "sync" : "batch";
    if (!analysis.succeeded()) {
      return new ResultMessage(documentKey, DocumentStatus.FAILED.value(), Where.of(source), run, null, List.of(),
          reason(analysis.failure()), mode, job, null);
    }
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
    return new ResultMessage(documentKey, DocumentStatus.ANALYSED.value(), Where.of(source), run, invoice, truncated,
        null,
        mode, job, null);
  }

  public static ResultMessage rejected(IdempotencyKey documentKey, DocumentSource source, String reason) {
    return refusal(documentKey, DocumentStatus.REJECTED, source, reason);
  }

  /** A document given up after its cap of paid tries (each may have been billed by Gemini, none answered). */
  public static ResultMessage gaveUp(IdempotencyKey documentKey, DocumentSource source, String reason) {
    return refusal(documentKey, DocumentStatus.FAILED, source, reason);
  }

  /**
   * A document whose bytes an earlier one had: its own result says so and names the earlier one, whose result holds
   * the invoice ({@code duplicateOf}, {@code duplicateOfAnalysisId}). The same invoice uploaded twice is one invoice.
   */
  public static ResultMessage duplicate(IdempotencyKey documentKey, DocumentSource source,
      IdempotencyKey original) {
    return new ResultMessage(documentKey, DocumentStatus.DUPLICATE.value(), Where.of(source), 1, null, List.of(), null,
        null,
        null, original);
  }

  public static ResultMessage jobFailed(IdempotencyKey documentKey, String job, String reason) {
    return jobFailed(documentKey, job, reason, 1);
  }

  public static ResultMessage jobFailed(IdempotencyKey documentKey, String job, String reason, int run) {
    return new ResultMessage(documentKey, DocumentStatus.FAILED.value(), null, run, null, List.of(), reason(reason),
        "batch",
        job, null);
  }

  private static ResultMessage refusal(IdempotencyKey key, DocumentStatus status, DocumentSource source, String why) {
    return new ResultMessage(key, status.value(), Where.of(source), 1, null, List.of(), reason(why), null, null, null);
  }

  private static String reason(String reason) {
    return ForeignText.cut(reason, MAX_REASON_CHARS);
  }

  /** Whether this result has {@code status}. */
  public boolean is(DocumentStatus status) {
    return status.is(this.status);
  }

  /** The same result, as run {@code run} of its analysis. */
  public ResultMessage asRun(int run) {
    return new ResultMessage(key, status, source, run, invoice, truncated, reason, mode, job, duplicateOf);
  }

  /** Canonical JSON: sorted keys, so equal results give equal bytes. */
  public byte[] json() {
    try {
      return JSON.writeValueAsBytes(fields());
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("result summary is not serialisable", e);
    }
  }

  /** The attributes every published result carries: the document's key, for the receiver to drop copies. */
  public static Map<String, String> attributes(IdempotencyKey documentKey) {
    return Map.of(PubSubMessageKeys.ATTRIBUTE, documentKey.value());
  }

  private Map<String, Object> fields() {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("key", key.value());
    fields.put("status", status);
    fields.put("analysisId", key.documentId());
    if (source != null) {
      Map<String, Object> where = new LinkedHashMap<>();
      where.put("bucket", source.bucket());
      where.put("name", source.name());
      where.put("generation", source.generation());
      fields.put("source", where);
    }
    if (run > 1) {
      fields.put(RecordWrites.RERUN, (long) run);
    }
    if (invoice != null) {
      fields.put("invoice", invoice);
    }
    if (!truncated.isEmpty()) {
      fields.put("truncated", truncated);
    }
    if (reason != null) {
      fields.put("reason", reason);
    }
    if (mode != null) {
      fields.put("mode", mode);
    }
    if (job != null) {
      fields.put("job", job);
    }
    if (duplicateOf != null) {
      fields.put("duplicateOf", duplicateOf.value());
      fields.put("duplicateOfAnalysisId", duplicateOf.documentId());
    }
    return fields;
  }

  private static ResultMessage decode(Map<String, Object> fields) {
    IdempotencyKey key = IdempotencyKey.of(String.valueOf(fields.get("key")));
    String status = text(fields, "status");
    if (status == null) {
      throw new IllegalArgumentException("a result of " + key.logHash() + " has no status");
    }
    Where source = fields.get("source") instanceof Map<?, ?> where
        ? new Where(String.valueOf(where.get("bucket")), String.valueOf(where.get("name")),
            where.get("generation") instanceof Number n ? n.longValue() : 0)
        : null;
    int run = fields.get(RecordWrites.RERUN) instanceof Number n ? Math.max(1, n.intValue()) : 1;
    Map<String, Object> invoice = null;
    if (fields.get("invoice") instanceof Map<?, ?> headline) {
      invoice = new LinkedHashMap<>();
      for (Map.Entry<?, ?> field : headline.entrySet()) {
        invoice.put(String.valueOf(field.getKey()), field.getValue());
      }
    }
    List<String> truncated = fields.get("truncated") instanceof List<?> cut
        ? cut.stream().map(String::valueOf).toList() : List.of();
    return new ResultMessage(key, status, source, run, invoice, truncated, text(fields, "reason"),
        text(fields, "mode"), text(fields, "job"),
        fields.get("duplicateOf") instanceof String original ? IdempotencyKey.of(original) : null);
  }

  private static String text(Map<String, Object> fields, String name) {
    return fields.get(name) == null ? null : String.valueOf(fields.get(name));
  }
}
