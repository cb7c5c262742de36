package dev.once.pipeline;

import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import dev.once.internal.budget.Reservation;
import dev.once.internal.key.InvalidKey;
import dev.once.key.IdempotencyKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What the pipeline reads back of its own documents ({@link Records}): every query it runs, bounded. */
public final class RecordQueries {
  /**
   * At most this many documents per job ({@code BATCH_MAX_DOCUMENTS} is bounded by it); the bound keeps a foreign or
   * corrupted job from reading the collection.
   */
  public static final int MAX_DOCUMENTS_PER_JOB = 150;
  /** How long a query may take before it is an error. */
  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;

  public RecordQueries(Firestore db) {
    this.db = db;
  }

  /**
   * What a document's analysis says, as far as a completion or a deferral must know: whose job it waits for, if any;
   * since when it waits for budget, if it does.
   */
  public record AnalysisState(IdempotencyKey documentKey, String status, String job, Instant deferredAt) {
    /**
     * Whether a job made for this document is a stray second job: the analysis names another job, or the document is
     * done without it. Not while the document is deferred: a deferred document's next try adopts the job an earlier
     * try made and lost the answer of (the reconciler resumes it), and until then its analysis names no job.
     */
    public boolean disowns(String job) {
      return !job.equals(this.job) && !Records.DEFERRED.equals(status);
    }
  }

  /** The analysis of the document with this id (one read), or empty when it has none. */
  public Optional<AnalysisState> analysis(String documentId) {
    try {
      var snapshot = db.collection(Records.ANALYSES).document(documentId).get()
          .get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      String key = snapshot.exists() ? snapshot.getString("key") : null;
      return key == null ? Optional.empty()
          : Optional.of(new AnalysisState(IdempotencyKey.of(key), snapshot.getString("status"), snapshot.getString("job"),
              instant(snapshot.getTimestamp("deferredAt"))));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the analysis " + documentId, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not read the analysis " + documentId + ": " + e, e);
    }
  }

  /**
   * A document a batch job was submitted for, with the source recorded at submission and the day's budget it reserved
   * ({@link Reservation#NONE} when none), which the job's completion settles.
   */
  public record Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation,
      String gathering) {}

  /**
   * The documents submitted to {@code job} (a query on the analyses' {@code job} field, an automatic single-field
   * index): how a job that ended without answers is traced back to its documents.
   */
  public List<Submitted> submittedTo(String job) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(
        db.collection(Records.ANALYSES).whereEqualTo("job", job).limit(MAX_DOCUMENTS_PER_JOB), "the analyses of " + job)) {
      String key = doc.getString("key");
      if (key != null) {
        found.add(new Submitted(IdempotencyKey.of(key), Records.source(doc.get("source")),
            Reservation.fromMap(doc.get("reservation")), doc.getString("batch")));
      }
    }
    return found;
  }

  /**
   * The documents gathered into {@code gathering} (a query on the analyses' {@code batch} field): the requests of its
   * job, with their sources.
   */
  public List<Submitted> gatheredIn(String gathering) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(db.collection(Records.ANALYSES).whereEqualTo("batch", gathering)
        .limit(MAX_DOCUMENTS_PER_JOB), "the documents of the gathering " + gathering)) {
      String key = doc.getString("key");
      DocumentSource source = Records.source(doc.get("source"));
      if (key != null && source != null) {
        found.add(new Submitted(IdempotencyKey.of(key), source, Reservation.fromMap(doc.get("reservation")), gathering));
      }
    }
    return found;
  }

  /** A document waiting to be gathered into a batch job: its size, and since when it waits. */
  public record Queued(String documentId, long size, Instant queuedAt) {}

  /**
   * Up to {@code limit} queued documents, oldest first: an equality and an ordering on another field, so a composite
   * index (status, queuedAt), which terraform/firestore.tf declares.
   */
  public List<Queued> queued(int limit) {
    List<Queued> found = new ArrayList<>();
    Query oldestFirst = db.collection(Records.ANALYSES).whereEqualTo("status", Records.QUEUED)
        .orderBy("queuedAt").limit(limit);
    for (QueryDocumentSnapshot doc : read(oldestFirst, "the queued documents")) {
      Instant queuedAt = instant(doc.getTimestamp("queuedAt"));
      Long size = doc.getLong("size");
      if (queuedAt != null && size != null) {
        found.add(new Queued(doc.getId(), size, queuedAt));
      }
    }
    return found;
  }

  /**
   * How many documents are queued, counted up to {@code limit} (an aggregation: one read per thousand entries), so
   * an upload can tell a full job's worth is waiting without reading it.
   */
  public long queuedCount(int limit) {
    try {
      return db.collection(Records.ANALYSES).whereEqualTo("status", Records.QUEUED).limit(limit).count().get()
          .get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).getCount();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while counting the queued documents", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not count the queued documents: " + e, e);
    }
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
    var submitted = db.collection(Records.ANALYSES).whereEqualTo("status", Records.SUBMITTED)
        .orderBy(FieldPath.documentId());
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

  /** A document waiting for the day's budget, as its analysis recorded it. */
  public record Deferred(IdempotencyKey documentKey, DocumentSource source, Instant deferredAt) {}

  /**
   * Up to {@code limit} deferred documents, oldest deferral first: an equality and an ordering on another field, so
   * a composite index (status, deferredAt), which terraform/firestore.tf declares. A document whose key or source
   * cannot be read is skipped.
   */
  public List<Deferred> deferred(int limit) {
    List<Deferred> found = new ArrayList<>();
    Query oldestFirst = db.collection(Records.ANALYSES).whereEqualTo("status", Records.DEFERRED)
        .orderBy("deferredAt").limit(limit);
    for (QueryDocumentSnapshot doc : read(oldestFirst, "the deferred documents")) {
      String key = doc.getString("key");
      DocumentSource source = Records.source(doc.get("source"));
      if (key == null || source == null) {
        continue;
      }
      try {
        found.add(new Deferred(IdempotencyKey.of(key), source, instant(doc.getTimestamp("deferredAt"))));
      } catch (InvalidKey e) {
        // skipped: it must not stop the others being resumed
      }
    }
    return found;
  }

  private static Instant instant(com.google.cloud.Timestamp timestamp) {
    return timestamp == null ? null : timestamp.toDate().toInstant();
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
}
