package dev.once.pipeline;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import com.google.cloud.firestore.SetOptions;
import dev.once.gemini.Analysis;
import dev.once.gemini.PriceTable;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The pipeline's own Firestore documents: {@code analyses/{id}} (one per document) and {@code billing/{id}} (one
 * per billed document), with id = {@link IdempotencyKey#documentId()} of the document key. They are written as
 * {@link SideWrites} of a ledger completion, so they land with it or not at all; their fixed ids make even a
 * rare second writer overwrite, never add.
 */
public final class Records {
  public static final String ANALYSES = "analyses";
  public static final String BILLING = "billing";

  /** Values of an analysis's {@code status}. */
  public static final String SUBMITTED = "submitted";
  public static final String ANALYSED = "analysed";
  public static final String FAILED = "failed";
  public static final String REJECTED = "rejected";

  /** One document per job here; the bound keeps a foreign or corrupted job from reading the collection. */
  static final int MAX_DOCUMENTS_PER_JOB = 100;
  /** How long a query may take before it is an error. */
  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;
  private final PriceTable prices;

  public Records(Firestore db, PriceTable prices) {
    this.db = db;
    this.prices = prices;
  }

  public DocumentReference analysis(IdempotencyKey documentKey) {
    return db.collection(ANALYSES).document(documentKey.documentId());
  }

  public DocumentReference billing(IdempotencyKey documentKey) {
    return db.collection(BILLING).document(documentKey.documentId());
  }

  /** A document refused before any paid call: bad type, size, empty, or gone. */
  public SideWrites rejected(IdempotencyKey documentKey, DocumentSource source, String reason) {
    Map<String, Object> fields = base(documentKey, REJECTED);
    fields.put("reason", reason);
    if (source != null) {
      fields.put("source", source.toMap());
    }
    return writes -> writes.set(analysis(documentKey), fields, SetOptions.merge());
  }

  /** A document handed to a batch job; the job's completion fills the analysis in. */
  public SideWrites submitted(IdempotencyKey documentKey, DocumentSource source, String job) {
    Map<String, Object> fields = base(documentKey, SUBMITTED);
    fields.put("mode", "batch");
    fields.put("job", job);
    fields.put("source", source.toMap());
    return writes -> writes.set(analysis(documentKey), fields, SetOptions.merge());
  }

  /** Gemini answered: the analysis (analysed, or failed when the answer held no invoice) and its bill. */
  public SideWrites analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis, String job) {
    boolean batch = job != null;
    Map<String, Object> fields = base(documentKey, analysis.succeeded() ? ANALYSED : FAILED);
    fields.put("mode", batch ? "batch" : "sync");
    fields.put("model", analysis.model());
    fields.put("invoice", analysis.invoice());
    fields.put("reason", analysis.failure());
    fields.put("usage", usage(analysis));
    if (source != null) {
      fields.put("source", source.toMap());
    }
    if (batch) {
      fields.put("job", job);
    }
    Map<String, Object> bill = new LinkedHashMap<>();
    bill.put("key", documentKey.value());
    bill.put("model", analysis.model());
    bill.putAll(usage(analysis));
    Optional<Long> cost = prices.costMicroUsd(analysis.model(), analysis.usage(), batch);
    bill.put("costMicroUsd", cost.orElse(null));
    bill.put("priced", cost.isPresent());
    bill.put("batch", batch);
    bill.put("billedAt", FieldValue.serverTimestamp());
    return writes -> {
      writes.set(analysis(documentKey), fields, SetOptions.merge());
      writes.set(billing(documentKey), bill);
    };
  }

  /** A batch job that ended without an answer for this document (failed, expired, cancelled): nothing billed. */
  public SideWrites jobFailed(IdempotencyKey documentKey, String job, String reason) {
    Map<String, Object> fields = base(documentKey, FAILED);
    fields.put("mode", "batch");
    fields.put("job", job);
    fields.put("reason", reason);
    return writes -> writes.set(analysis(documentKey), fields, SetOptions.merge());
  }

  /** A document a batch job was submitted for, with the source recorded at submission. */
  public record Submitted(IdempotencyKey documentKey, DocumentSource source) {}

  /**
   * The documents submitted to {@code job} (a query on the analyses' {@code job} field, an automatic single-field
   * index): how a job that ended without answers is traced back to its documents.
   */
  public List<Submitted> submittedTo(String job) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(
        db.collection(ANALYSES).whereEqualTo("job", job).limit(MAX_DOCUMENTS_PER_JOB), "the analyses of " + job)) {
      String key = doc.getString("key");
      if (key != null) {
        found.add(new Submitted(IdempotencyKey.of(key), source(doc.get("source"))));
      }
    }
    return found;
  }

  /** A document whose batch job has not been completed yet, as its analysis says. */
  public record Pending(IdempotencyKey documentKey, String job) {}

  /**
   * Up to {@code limit} documents still {@code submitted}, starting at a random point of the collection and wrapping
   * around (an equality filter ordered by document id needs only the automatic indexes), so that over a few runs
   * every one of them is looked at, however many are waiting.
   */
  public List<Pending> pendingSubmissions(int limit, String startAtId) {
    List<Pending> found = new ArrayList<>();
    var submitted = db.collection(ANALYSES).whereEqualTo("status", SUBMITTED).orderBy(FieldPath.documentId());
    for (QueryDocumentSnapshot doc : read(submitted.startAt(startAtId).limit(limit), "the pending submissions")) {
      pending(doc).ifPresent(found::add);
    }
    if (found.size() < limit) {
      for (QueryDocumentSnapshot doc :
          read(submitted.endBefore(startAtId).limit(limit - found.size()), "the pending submissions")) {
        pending(doc).ifPresent(found::add);
      }
    }
    return found;
  }

  /** Runs a query, bounded by a deadline, so a stuck Firestore is an error and not a hang. */
  private static QuerySnapshot read(Query query, String what) {
    try {
      return query.get().get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not read " + what + ": " + e, e);
    }
  }

  /** A document whose key or job cannot be read is skipped: it must not stop the others being looked at. */
  private static Optional<Pending> pending(QueryDocumentSnapshot doc) {
    String key = doc.getString("key");
    String job = doc.getString("job");
    if (key == null || job == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new Pending(IdempotencyKey.of(key), job));
    } catch (InvalidKey e) {
      return Optional.empty();
    }
  }

  private static DocumentSource source(Object value) {
    if (!(value instanceof Map<?, ?> map)) {
      return null;
    }
    return new DocumentSource(String.valueOf(map.get("bucket")), String.valueOf(map.get("name")),
        number(map.get("generation")), map.get("contentType") == null ? null : String.valueOf(map.get("contentType")),
        number(map.get("size")), null, null);
  }

  private static long number(Object value) {
    return value instanceof Number n ? n.longValue() : 0L;
  }

  private static Map<String, Object> base(IdempotencyKey documentKey, String status) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("key", documentKey.value());
    fields.put("status", status);
    fields.put("updatedAt", FieldValue.serverTimestamp());
    return fields;
  }

  private static Map<String, Object> usage(Analysis analysis) {
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("promptTokens", analysis.usage().promptTokens());
    usage.put("outputTokens", analysis.usage().outputTokens());
    usage.put("totalTokens", analysis.usage().totalTokens());
    return usage;
  }
}
