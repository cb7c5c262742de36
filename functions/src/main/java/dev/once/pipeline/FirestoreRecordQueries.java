package dev.once.pipeline;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldPath;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.QuerySnapshot;
import dev.once.budget.Reservation;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link RecordQueries} on the analyses in Firestore: each query bounded by a deadline, so a stuck Firestore is an
 * error and not a hang, and the index each query needs said beside it (terraform/firestore.tf declares the composite
 * ones).
 */
public final class FirestoreRecordQueries implements RecordQueries {
  /** Documents read by id per call ({@code getAll}), so a call stays a small request however large the job. */
  private static final int READ_BY_ID = 500;
  /** How long a query may take before it is an error. */
  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;

  public FirestoreRecordQueries(Firestore db) {
    this.db = db;
  }

  @Override
  public Optional<AnalysisState> analysis(String documentId) {
    try {
      var snapshot = db.collection(RecordWrites.ANALYSES).document(documentId).get()
          .get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      String key = snapshot.exists() ? snapshot.getString("key") : null;
      return key == null ? Optional.empty()
          : Optional.of(new AnalysisState(IdempotencyKey.of(key),
              DocumentStatus.of(snapshot.getString("status")).orElse(null), snapshot.getString("job"),
              instant(snapshot.getTimestamp("deferredAt")), snapshot.getString("model") != null));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the analysis " + documentId, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not read the analysis " + documentId + ": " + e, e);
    }
  }

  /** A query on the analyses' {@code job} field, an automatic single-field index. */
  @Override
  public List<Submitted> submittedTo(String job) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(ofJob(job).limit(MAX_DOCUMENTS_PER_JOB), "the analyses of " + job)) {
      String key = doc.getString("key");
      if (key != null) {
        found.add(new Submitted(IdempotencyKey.of(key), DocumentSource.fromMap(doc.get("source")),
            Reservation.fromMap(doc.get("reservation")), doc.getString("batch"), doc.getUpdateTime(), reruns(doc),
            instant(doc.getTimestamp("queuedAt")), tries(doc.get(RecordWrites.TRIES)), run(doc)));
      }
    }
    return found;
  }

  @Override
  public boolean anySubmittedTo(String job, Duration bound) {
    return !await(ofJob(job).limit(1).get(), bound, "a document submitted to " + job).isEmpty();
  }

  /** The analyses that name {@code job}: the one query both ask, on the one index. */
  private Query ofJob(String job) {
    return db.collection(RecordWrites.ANALYSES).whereEqualTo("job", job);
  }

  /** A query on the analyses' {@code batch} field. */
  @Override
  public List<Submitted> gatheredIn(String gathering) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(db.collection(RecordWrites.ANALYSES).whereEqualTo("batch", gathering)
        .limit(MAX_DOCUMENTS_PER_JOB), "the documents of the gathering " + gathering)) {
      submitted(doc, gathering).ifPresent(found::add);
    }
    return found;
  }

  @Override
  public List<Submitted> waitingFor(String job, String gathering, List<String> documentIds) {
    List<Submitted> found = new ArrayList<>();
    for (int from = 0; from < documentIds.size(); from += READ_BY_ID) {
      DocumentReference[] refs = documentIds.subList(from, Math.min(documentIds.size(), from + READ_BY_ID)).stream()
          .map(id -> db.collection(RecordWrites.ANALYSES).document(id)).toArray(DocumentReference[]::new);
      for (DocumentSnapshot doc : await(db.getAll(refs), "the analyses of " + job)) {
        String status = doc.getString("status");
        boolean gathered = gathering != null && gathering.equals(doc.getString("batch"))
            && (DocumentStatus.GATHERED.is(status) || DocumentStatus.SUBMITTED.is(status));
        boolean submitted = DocumentStatus.SUBMITTED.is(status) && job.equals(doc.getString("job"));
        if (doc.exists() && (gathered || submitted)) {
          submitted(doc, gathering).ifPresent(found::add);
        }
      }
    }
    return found;
  }

  private static Optional<Submitted> submitted(DocumentSnapshot doc, String gathering) {
    String key = doc.getString("key");
    DocumentSource source = DocumentSource.fromMap(doc.get("source"));
    if (key == null || source == null) {
      return Optional.empty();
    }
    return Optional.of(new Submitted(IdempotencyKey.of(key), source, Reservation.fromMap(doc.get("reservation")),
        gathering, doc.getUpdateTime(), reruns(doc), instant(doc.getTimestamp("queuedAt")),
        tries(doc.get(RecordWrites.TRIES)), run(doc)));
  }

  /** Which run of its analysis the document is in: 1, or the {@code rerun} its analysis says. */
  private static int run(DocumentSnapshot doc) {
    Long run = doc.getLong(RecordWrites.RERUN);
    return run == null ? 1 : run.intValue();
  }

  private static int reruns(DocumentSnapshot doc) {
    Long reruns = doc.getLong(RecordWrites.RERUNS);
    return reruns == null ? 0 : reruns.intValue();
  }

  /** Automatic indexes, as {@link #pendingSubmissions}. */
  @Override
  public List<Gathered> gathered(int limit, String startAtId) {
    List<Gathered> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : scan(DocumentStatus.GATHERED, limit, startAtId, "the gathered documents")) {
      String gathering = doc.getString("batch");
      if (gathering != null) {
        found.add(new Gathered(doc.getId(), gathering, doc.getUpdateTime()));
      }
    }
    return found;
  }

  /**
   * An equality and an ordering on another field, so a composite index (status, queuedAt), which
   * terraform/firestore.tf declares.
   */
  @Override
  public List<Queued> queued(int limit) {
    List<Queued> found = new ArrayList<>();
    Query oldestFirst = db.collection(RecordWrites.ANALYSES).whereEqualTo("status", DocumentStatus.QUEUED.value())
        .orderBy("queuedAt").limit(limit);
    for (QueryDocumentSnapshot doc : read(oldestFirst, "the queued documents")) {
      Instant queuedAt = instant(doc.getTimestamp("queuedAt"));
      Long size = doc.getLong("size");
      if (queuedAt != null && size != null) {
        Long jobLimit = doc.getLong(RecordWrites.JOB_LIMIT);
        found.add(new Queued(doc.getId(), size, queuedAt, jobLimit == null ? 0 : jobLimit.intValue(), reruns(doc),
            doc.getUpdateTime()));
      }
    }
    return found;
  }

  /** An aggregation: one read per thousand entries. */
  @Override
  public long queuedCount(int limit) {
    try {
      return db.collection(RecordWrites.ANALYSES).whereEqualTo("status", DocumentStatus.QUEUED.value()).limit(limit)
          .count()
          .get()
          .get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).getCount();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while counting the queued documents", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not count the queued documents: " + e, e);
    }
  }

  /** An equality filter ordered by document id: it needs only the automatic indexes. */
  @Override
  public List<Pending> pendingSubmissions(int limit, String startAtId) {
    List<Pending> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : scan(DocumentStatus.SUBMITTED, limit, startAtId, "the pending submissions")) {
      pending(doc).ifPresent(found::add);
    }
    return found;
  }

  /** Up to {@code limit} analyses of this status, in document-id order from {@code startAtId}, wrapping around. */
  private List<QueryDocumentSnapshot> scan(DocumentStatus status, int limit, String startAtId, String what) {
    Query withStatus = db.collection(RecordWrites.ANALYSES).whereEqualTo("status", status.value())
        .orderBy(FieldPath.documentId());
    List<QueryDocumentSnapshot> found = new ArrayList<>(read(withStatus.startAt(startAtId).limit(limit), what)
        .getDocuments());
    if (found.size() < limit) {
      found.addAll(read(withStatus.endBefore(startAtId).limit(limit - found.size()), what).getDocuments());
    }
    return found;
  }

  /**
   * An equality and an ordering on another field, so a composite index (status, deferredAt), which
   * terraform/firestore.tf declares.
   */
  @Override
  public List<Deferred> deferred(int limit) {
    List<Deferred> found = new ArrayList<>();
    Query oldestFirst = db.collection(RecordWrites.ANALYSES).whereEqualTo("status", DocumentStatus.DEFERRED.value())
        .orderBy("deferredAt").limit(limit);
    for (QueryDocumentSnapshot doc : read(oldestFirst, "the deferred documents")) {
      String key = doc.getString("key");
      DocumentSource source = DocumentSource.fromMap(doc.get("source"));
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

  private static Instant instant(Timestamp timestamp) {
    return timestamp == null ? null : timestamp.toDate().toInstant();
  }

  /** Runs a query, bounded by a deadline, so a stuck Firestore is an error and not a hang. */
  private static QuerySnapshot read(Query query, String what) {
    return await(query.get(), what);
  }

  static <T> T await(Future<T> future, String what) {
    return await(future, QUERY_TIMEOUT, what);
  }

  private static <T> T await(Future<T> future, Duration bound, String what) {
    try {
      return future.get(bound.toMillis(), TimeUnit.MILLISECONDS);
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

  /** The tries an analysis lists ({@link RecordWrites#requeuedAfterUnusedAnswer}), oldest first, each as a line of a give-up's reason. */
  private static List<String> tries(Object stored) {
    if (!(stored instanceof Map<?, ?> slots)) {
      return List.of();
    }
    return slots.values().stream().filter(Map.class::isInstance).map(Map.class::cast)
        .sorted(Comparator.comparingLong(t -> t.get("try") instanceof Number n ? n.longValue() : 0))
        .map(t -> t.get("job") + ": " + t.get("reason") + " (" + t.get("outputTokens") + " output tokens, "
            + (t.get("costMicroUsd") == null ? "unpriced" : t.get("costMicroUsd") + " µUSD") + ")")
        .toList();
  }
}
