package dev.once.pipeline;

import dev.once.budget.Reservation;
import dev.once.gemini.Analysis;
import dev.once.gemini.PriceTable;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.SideWrites;
import dev.once.observe.ForeignText;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pipeline's own Firestore documents: {@code analyses/{id}} (one per document) and {@code billing/{id}} (one
 * per billed document), with id = {@link IdempotencyKey#documentId()} of the document key. They are written as
 * {@link SideWrites} of a ledger completion, so they land with it or not at all; their fixed ids make even a
 * rare second writer overwrite, never add. What the pipeline reads back of them is {@link RecordQueries}.
 *
 * <p>Longer than the house's ~300 lines on purpose: every write of both collections is here, because
 * terraform/check's index check reads the fields a file writes against the collections that file opens (a bill and
 * an analysis share their model, usage and rerouting fields).
 */
public final class RecordWrites {
  public static final String ANALYSES = "analyses";
  public static final String BILLING = "billing";

  /** A copy deferred until the first document of its bytes is analysed: that one's key. */
  public static final String WAITING_FOR = "waitingFor";
  /** On an analysis, a bill and a result: which run of the analysis it is, after the first (once invalidate). */
  public static final String RERUN = "rerun";
  /** Batch mode: how many jobs ended without an answer that could be given to the document (it was queued again). */
  public static final String RERUNS = "reruns";
  /** Batch mode: the most documents a job holding the document may have (Gemini refused a larger one for its size). */
  public static final String JOB_LIMIT = "jobLimit";
  /**
   * Batch mode: the answers Google billed to the document that could not be used (one a job, at most {@link
   * #MAX_TRIES} kept: slot = reruns mod it), each what it returned and cost: what a document given up says of them.
   */
  public static final String TRIES = "tries";
  static final int MAX_TRIES = 10;

  /** The field a Firestore TTL policy deletes an analysis or a bill by (RECORDS_RETENTION_DAYS after its last write). */
  public static final String EXPIRE_AT = "expireAt";

  private final PriceTable prices;
  private final Optional<Duration> retention;
  private final InstantSource clock;

  /** Records kept until deleted. */
  public RecordWrites(PriceTable prices) {
    this(prices, Optional.empty(), InstantSource.system());
  }

  /** @param retention how long an analysis or a bill is kept after its last write; empty: kept */
  public RecordWrites(PriceTable prices, Optional<Duration> retention, InstantSource clock) {
    this.prices = prices;
    this.retention = retention;
    this.clock = clock;
  }

  /** A document refused before any paid call: bad type, size, empty, or gone. */
  public SideWrites rejected(IdempotencyKey documentKey, DocumentSource source, String reason) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.REJECTED);
    fields.put("reason", bounded(reason));
    if (source != null) {
      fields.put("source", source.toMap());
    }
    return writes -> writes.merge(ANALYSES, documentKey.documentId(), fields);
  }

  /**
   * A document the day's budget cannot take yet: deferred, with the reason, since {@code since} (its first deferral,
   * which keeps its place in the reconciler's queue; null: now). The event is acknowledged; nothing was paid.
   */
  public SideWrites deferred(IdempotencyKey documentKey, DocumentSource source, String reason, Instant since) {
    return deferred(documentKey, source, reason, since, null);
  }

  /**
   * A copy of bytes whose first document ({@code first}) is not analysed yet, neither refused nor given up: deferred
   * now (at the back of the reconciler's queue), with {@link #WAITING_FOR} naming that one, until it is analysed (the
   * copy is then its duplicate) or passes the content's claim on (the copy is analysed itself). Nothing was paid.
   */
  public SideWrites waiting(IdempotencyKey documentKey, DocumentSource source, String reason, IdempotencyKey first) {
    return deferred(documentKey, source, reason, null, first);
  }

  private SideWrites deferred(IdempotencyKey documentKey, DocumentSource source, String reason, Instant since,
      IdempotencyKey first) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.DEFERRED);
    fields.put("reason", bounded(reason));
    fields.put("deferredAt", since == null ? DocumentWrites.serverTime() : since);
    fields.put(WAITING_FOR, first == null ? null : first.value()); // a copy's wait, or none (cleared for budget)
    if (source != null) {
      fields.put("source", source.toMap());
    }
    return writes -> writes.merge(ANALYSES, documentKey.documentId(), fields);
  }

  /**
   * A document handed to a batch job; the job's completion fills the analysis in, and settles the {@code reservation}
   * recorded here. Replaces whatever was there (a deferral at most: the submission is fenced by the document's claim,
   * and a completion only ever applies to a document whose analysis already names its job).
   */
  public SideWrites submitted(IdempotencyKey documentKey, DocumentSource source, String job, Reservation reservation) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.SUBMITTED);
    fields.put("mode", "batch");
    fields.put("job", job);
    fields.put("source", source.toMap());
    if (!reservation.none()) {
      fields.put("reservation", reservation.toMap());
    }
    return writes -> writes.set(ANALYSES, documentKey.documentId(), fields);
  }

  /**
   * A document waiting to be gathered into a batch job, with its size (a job's bytes are bounded) and the day's budget
   * it reserved, which the job's completion settles. Replaces whatever was there (a deferral at most: it is written in
   * the commit that completes the document's claim); {@code queuedAt} is the commit's time, so the oldest document
   * of the queue says when a job is due.
   */
  public SideWrites queued(IdempotencyKey documentKey, DocumentSource source, long size, Reservation reservation) {
    return queued(documentKey, source, size, reservation, 1);
  }

  /**
   * The same for run {@code run} of the analysis (after an operator invalidated the earlier ones on purpose): the run
   * rides with the document through its gathering and job, so that its completion bills it in a bill of its own and
   * publishes it under {@code KEY/rerun-N}, whatever mode the earlier runs were made in.
   */
  public SideWrites queued(IdempotencyKey documentKey, DocumentSource source, long size, Reservation reservation,
      int run) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.QUEUED);
    if (run > 1) {
      fields.put(RERUN, (long) run);
    }
    fields.put("mode", "batch");
    fields.put("source", source.toMap());
    fields.put("size", size);
    fields.put("queuedAt", DocumentWrites.serverTime());
    if (!reservation.none()) {
      fields.put("reservation", reservation.toMap());
    }
    return writes -> writes.set(ANALYSES, documentKey.documentId(), fields);
  }

  /**
   * A gathered document back in the queue, for another job: its job ended without an answer that could be given to it
   * (or Gemini refused the job, not the document). It keeps its place ({@code queuedAt}), size and reservation, which
   * the job that answers it settles; {@code reruns} counts the jobs that did not ({@code ONCE_MAX_ATTEMPTS} bounds
   * them), {@code jobLimit} (when above 0) bounds the documents of the next job holding it. A document submitted
   * before gathering existed is given a place in the queue now.
   */
  public SideWrites requeued(RecordQueries.Submitted document, String reason, int reruns, int jobLimit) {
    Map<String, Object> fields = requeuedFields(document, reason, reruns, jobLimit);
    return writes -> writes.merge(ANALYSES, document.documentKey().documentId(), fields);
  }

  private Map<String, Object> requeuedFields(RecordQueries.Submitted document, String reason, int reruns,
      int jobLimit) {
    Map<String, Object> fields = base(document.documentKey(), DocumentStatus.QUEUED);
    fields.put("mode", "batch");
    fields.put("reason", bounded(reason));
    fields.put("batch", null);
    fields.put("job", null);
    fields.put(RERUNS, (long) reruns);
    if (jobLimit > 0) {
      fields.put(JOB_LIMIT, (long) jobLimit);
    }
    if (document.queuedAt() == null) {
      fields.put("queuedAt", DocumentWrites.serverTime());
      fields.put("size", document.source() == null ? 0L : document.source().size());
    }
    return fields;
  }

  /**
   * A document whose bytes an earlier one had ({@code original}): it points at that analysis, and nothing is billed.
   * Replaces whatever was there (a deferral at most: it is written in the commit that completes the document's claim).
   */
  public SideWrites duplicate(IdempotencyKey documentKey, DocumentSource source, IdempotencyKey original) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.DUPLICATE);
    fields.put("duplicateOf", original.value());
    fields.put("duplicateOfAnalysisId", original.documentId());
    fields.put("source", source.toMap());
    return writes -> writes.set(ANALYSES, documentKey.documentId(), fields);
  }

  /**
   * What an answer cost, in millionths of a USD (batch jobs at half price): at the prices of the model that answered, on
   * the day it answered (now, when that is not known); empty when the model has no price.
   */
  public Optional<Long> costMicroUsd(Analysis analysis, boolean batch) {
    Instant at = analysis.answeredAt() != null ? analysis.answeredAt() : clock.instant();
    return prices.costMicroUsd(analysis.model(), analysis.usage(), batch, at);
  }

  /**
   * A document given up after its cap of tries that may have been billed: failed, with the reason. Nothing is billed
   * here: what Gemini charged for the tries that never answered is unknown (it is in Google's bill).
   */
  public SideWrites gaveUp(IdempotencyKey documentKey, DocumentSource source, String reason) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.FAILED);
    fields.put("reason", bounded(reason));
    if (source != null) {
      fields.put("source", source.toMap());
    }
    return writes -> writes.merge(ANALYSES, documentKey.documentId(), fields);
  }

  /** Gemini answered: the analysis (analysed, or failed when the answer held no invoice) and its bill. */
  public SideWrites analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis, String job) {
    return analysed(documentKey, source, analysis, job, 1);
  }

  /**
   * The same for run {@code run} of the analysis: a run after the first (an operator invalidated the earlier ones on
   * purpose) is billed in a bill of its own, {@code billing/{id of KEY/rerun-N}} with the document's {@code key} and
   * {@code rerun}, so every run's bill is kept; the analysis says which run it is.
   */
  public SideWrites analysed(IdempotencyKey documentKey, DocumentSource source, Analysis analysis, String job,
      int run) {
    boolean batch = job != null;
    Map<String, Object> fields = base(documentKey,
        analysis.succeeded() ? DocumentStatus.ANALYSED : DocumentStatus.FAILED);
    fields.put("mode", batch ? "batch" : "sync");
    fields.put("model", analysis.model());
    rerouting(analysis, fields);
    fields.put("invoice", analysis.invoice());
    fields.put("reason", bounded(analysis.failure()));
    if (!analysis.truncated().isEmpty()) {
      fields.put("truncated", analysis.truncated());
    }
    fields.put("usage", usage(analysis));
    if (source != null) {
      fields.put("source", source.toMap());
    }
    if (batch) {
      fields.put("job", job);
    }
    if (run > 1) {
      fields.put(RERUN, (long) run);
    }
    Map<String, Object> bill = bill(documentKey, analysis, batch);
    if (run > 1) {
      bill.put(RERUN, (long) run);
    }
    expiring(bill);
    return writes -> {
      writes.merge(ANALYSES, documentKey.documentId(), fields);
      writes.set(BILLING, documentKey.rerun(run).documentId(), bill);
    };
  }

  /**
   * A document back in the queue after an answer Google billed to it in {@code job} could not be used (filed under its
   * key, it cannot be verified as its: it names no reference, or another): the answer is kept, not thrown away. Its
   * bill, {@code billing/{id of KEY#job}} with {@code unused} and why, lands once however often it is written; the try
   * is listed on the analysis (slot {@code try} mod {@link #MAX_TRIES}: a bounded map); and the reservation, settled to
   * its cost in the same commit, is taken off, so that its next job reserves anew (JobRequests).
   */
  public SideWrites requeuedAfterUnusedAnswer(RecordQueries.Submitted document, String reason, int reruns, String job,
      Analysis analysis) {
    Optional<Long> cost = costMicroUsd(analysis, true);
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("try", (long) reruns);
    entry.put("job", job);
    entry.put("reason", bounded(reason + (analysis.failure() == null ? "" : ": " + analysis.failure())));
    entry.put("costMicroUsd", cost.orElse(null));
    entry.put("outputTokens", analysis.usage().outputTokens());
    Map<String, Object> fields = requeuedFields(document, reason, reruns, 0);
    fields.put(TRIES, Map.of(String.valueOf(reruns % MAX_TRIES), entry));
    fields.put("reservation", null); // settled to the answer: its next job reserves anew
    return unusedAnswerBill(document, reason, job, analysis)
        .and(writes -> writes.merge(ANALYSES, document.documentKey().documentId(), fields));
  }

  /**
   * The bill of an answer Google billed to the document in {@code job} that could not be used: {@code billing/{id of
   * KEY#job}}, with {@code unused} and why.
   */
  public SideWrites unusedAnswerBill(RecordQueries.Submitted document, String reason, String job, Analysis analysis) {
    IdempotencyKey documentKey = document.documentKey();
    Map<String, Object> bill = bill(documentKey, analysis, true);
    bill.put("job", job);
    bill.put("unused", true);
    bill.put("reason", bounded(reason));
    expiring(bill);
    String billId = IdempotencyKey.of(documentKey.value() + "#" + job).documentId();
    return writes -> writes.set(BILLING, billId, bill);
  }

  /** A reservation made for a document's next job (its submission's commit), which that job's completion settles. */
  public SideWrites reserved(IdempotencyKey documentKey, Reservation reservation) {
    if (reservation.none()) {
      return SideWrites.NONE;
    }
    return writes -> writes.merge(ANALYSES, documentKey.documentId(), Map.of("reservation", reservation.toMap()));
  }

  /** At most {@link #MAX_TEXT_CHARS} of a text someone else wrote (Google, the model), ending "…" when cut. */
  static String bounded(String text) {
    return ForeignText.cut(text, MAX_TEXT_CHARS);
  }

  /** The most of a reason, or of a field's text the model wrote, a record or a published result keeps. */
  public static final int MAX_TEXT_CHARS = 500;

  /** A batch job that ended without an answer for this document (failed, expired, cancelled): nothing billed. */
  public SideWrites jobFailed(IdempotencyKey documentKey, String job, String reason) {
    Map<String, Object> fields = base(documentKey, DocumentStatus.FAILED);
    fields.put("mode", "batch");
    fields.put("job", job);
    fields.put("reason", bounded(reason));
    return writes -> writes.merge(ANALYSES, documentKey.documentId(), fields);
  }

  private Map<String, Object> base(IdempotencyKey documentKey, DocumentStatus status) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("key", documentKey.value());
    fields.put("status", status.value());
    fields.put("updatedAt", DocumentWrites.serverTime());
    return expiring(fields);
  }

  /** With a retention, {@link #EXPIRE_AT}: now (this instance's clock; TTL works in days) plus the retention. */
  private Map<String, Object> expiring(Map<String, Object> fields) {
    retention.ifPresent(days -> fields.put(EXPIRE_AT, clock.instant().plus(days)));
    return fields;
  }

  /**
   * A bill's fields: what the answer cost at the prices of the model that answered, on the day it answered. Written
   * here beside the analyses, not in a class of its own: terraform/check reads the fields a file writes against the
   * collections it opens, and the bills and the analyses share their model and usage fields.
   */
  private Map<String, Object> bill(IdempotencyKey documentKey, Analysis analysis, boolean batch) {
    Map<String, Object> bill = new LinkedHashMap<>();
    bill.put("key", documentKey.value());
    bill.put("model", analysis.model());
    rerouting(analysis, bill);
    bill.putAll(usage(analysis));
    Optional<Long> cost = costMicroUsd(analysis, batch);
    bill.put("costMicroUsd", cost.orElse(null));
    bill.put("priced", cost.isPresent());
    bill.put("batch", batch);
    bill.put("billedAt", DocumentWrites.serverTime());
    return bill;
  }

  /** A rerouted answer names the model asked for beside the one that answered (and billed): {@code requestedModel}. */
  private static void rerouting(Analysis analysis, Map<String, Object> fields) {
    if (analysis.rerouted()) {
      fields.put("requestedModel", analysis.requestedModel());
      fields.put("rerouted", true);
    }
  }

  private static Map<String, Object> usage(Analysis analysis) {
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("promptTokens", analysis.usage().promptTokens());
    usage.put("outputTokens", analysis.usage().outputTokens());
    usage.put("totalTokens", analysis.usage().totalTokens());
    usage.put("thoughtsTokens", analysis.usage().thoughtsTokens());
    return usage;
  }
}
