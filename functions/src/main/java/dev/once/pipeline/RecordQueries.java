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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What the pipeline reads back of its own documents ({@link Records}): every query it runs, bounded. */
public final class RecordQueries {
  /**
   * At most this many documents per job ({@code BATCH_MAX_DOCUMENTS} is bounded by it); the bound keeps a foreign or
   * corrupted job from reading the collection. No commit holds a job's documents (the gathering records their ids,
   * 5,000 × 64 characters: a third of a document's 1 MiB; the completion commits them in chunks), so it bounds reads.
   */
  public static final int MAX_DOCUMENTS_PER_JOB = 5_000;
  /** Documents read by id per call ({@code getAll}), so a call stays a small request however large the job. */
  private static final int READ_BY_ID = 500;
  /** How long a query may take before it is an error. */
  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(30);

  private final Firestore db;

  public RecordQueries(Firestore db) {
    this.db = db;
  }

  /**
   * What a document's analysis says, as far as a completion, a deferral or a copy of its bytes must know: whose job it
   * waits for, if any; since when it waits for budget, if it does; whether a model answered it ({@code billed}: the
   * analysis names a {@code model}), which tells a billed {@code failed} answer from a give-up. {@code status} is
   * null when the analysis stores none this version knows.
   */
  public record AnalysisState(IdempotencyKey documentKey, DocumentStatus status, String job, Instant deferredAt,
      boolean billed) {
    public AnalysisState(IdempotencyKey documentKey, DocumentStatus status, String job, Instant deferredAt) {
      this(documentKey, status, job, deferredAt, false);
    }

    /**
     * Whether a job made for this document is a stray second job: the analysis names another job, or the document is
     * done without it. Not while the document is deferred: a deferred document's next try adopts the job an earlier
     * try made and lost the answer of (the reconciler resumes it), and until then its analysis names no job.
     */
    public boolean disowns(String job) {
      return !job.equals(this.job) && status != DocumentStatus.DEFERRED;
    }
  }

  /** The analysis of the document with this id (one read), or empty when it has none. */
  public Optional<AnalysisState> analysis(String documentId) {
    try {
      var snapshot = db.collection(Records.ANALYSES).document(documentId).get()
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

  /**
   * A document a batch job was submitted for, with the source recorded at submission and the day's budget it reserved
   * ({@link Reservation#NONE} when none), which the job's completion settles; how many jobs before this one ended
   * without an answer that could be given to it ({@code reruns}: it was queued again each time), and when it was first
   * queued (null for a document submitted before gathering existed).
   */
  public record Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation,
      String gathering, Timestamp updateTime, int reruns, Instant queuedAt, List<String> tries, int run) {
    public Submitted {
      tries = tries == null ? List.of() : List.copyOf(tries);
      run = Math.max(1, run);
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering,
        Timestamp updateTime, int reruns, Instant queuedAt, List<String> tries) {
      this(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, 1);
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering) {
      this(documentKey, source, reservation, gathering, null, 0, null, List.of());
    }

    public Submitted(IdempotencyKey documentKey, DocumentSource source, Reservation reservation, String gathering,
        Timestamp updateTime) {
      this(documentKey, source, reservation, gathering, updateTime, 0, null, List.of());
    }

    /** The same, {@code reruns} jobs having given it no usable answer, and these billed tries recorded. */
    public Submitted withReruns(int reruns, List<String> tries) {
      return new Submitted(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, run);
    }

    /** The same document, as run {@code run} of its analysis (an operator invalidated the earlier ones). */
    public Submitted asRun(int run) {
      return new Submitted(documentKey, source, reservation, gathering, updateTime, reruns, queuedAt, tries, run);
    }

    /** Run again after an earlier job: its job is made from an input file, whose answers come back keyed. */
    public boolean rerun() {
      return reruns > 0;
    }
  }

  /**
   * The documents submitted to {@code job} (a query on the analyses' {@code job} field, an automatic single-field
   * index): how a job that ended without answers is traced back to its documents.
   */
  public List<Submitted> submittedTo(String job) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(ofJob(job).limit(MAX_DOCUMENTS_PER_JOB), "the analyses of " + job)) {
      String key = doc.getString("key");
      if (key != null) {
        found.add(new Submitted(IdempotencyKey.of(key), Records.source(doc.get("source")),
            Reservation.fromMap(doc.get("reservation")), doc.getString("batch"), doc.getUpdateTime(), reruns(doc),
            instant(doc.getTimestamp("queuedAt")), Records.tries(doc.get(Records.TRIES)), run(doc)));
      }
    }
    return found;
  }

  /**
   * Whether any document of this pipeline was submitted to {@code job}: one read of at most one document, on the index
   * {@link #submittedTo} uses, within {@code bound} (the webhook, which someone waits on, bounds it tighter).
   */
  public boolean anySubmittedTo(String job, Duration bound) {
    return !await(ofJob(job).limit(1).get(), bound, "a document submitted to " + job).isEmpty();
  }

  /** The analyses that name {@code job}: the one query both ask, on the one index. */
  private Query ofJob(String job) {
    return db.collection(Records.ANALYSES).whereEqualTo("job", job);
  }

  /**
   * The documents gathered into {@code gathering} (a query on the analyses' {@code batch} field): the requests of its
   * job, with their sources, and the update time each was read at.
   */
  public List<Submitted> gatheredIn(String gathering) {
    List<Submitted> found = new ArrayList<>();
    for (QueryDocumentSnapshot doc : read(db.collection(Records.ANALYSES).whereEqualTo("batch", gathering)
        .limit(MAX_DOCUMENTS_PER_JOB), "the documents of the gathering " + gathering)) {
      submitted(doc, gathering).ifPresent(found::add);
    }
    return found;
  }

  /**
   * Of these documents (by id, a bounded number of reads per call), those still waiting for {@code job}: gathered
   * into {@code gathering} (null: none) or submitted to the job, in the order given. One done or refused is left out.
   */
  public List<Submitted> waitingFor(String job, String gathering, List<String> documentIds) {
    List<Submitted> found = new ArrayList<>();
    for (int from = 0; from < documentIds.size(); from += READ_BY_ID) {
      DocumentReference[] refs = documentIds.subList(from, Math.min(documentIds.size(), from + READ_BY_ID)).stream()
          .map(id -> db.collection(Records.ANALYSES).document(id)).toArray(DocumentReference[]::new);
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
    DocumentSource source = Records.source(doc.get("source"));
    if (key == null || source == null) {
      return Optional.empty();
    }
    return Optional.of(new Submitted(IdempotencyKey.of(key), source, Reservation.fromMap(doc.get("reservation")),
        gathering, doc.getUpdateTime(), reruns(doc), instant(doc.getTimestamp("queuedAt")),
        Records.tries(doc.get(Records.TRIES)), run(doc)));
  }

  /** Which run of its analysis the document is in: 1, or the {@code rerun} its analysis says. */
  private static int run(DocumentSnapshot doc) {
    Long run = doc.getLong(Records.RERUN);
    return run == null ? 1 : run.intValue();
  }

  private static int reruns(DocumentSnapshot doc) {
    Long reruns = doc.getLong(Records.RERUNS);
    return reruns == null ? 0 : reruns.intValue();
  }

  /** A document gathered into a gathering, as read: which one, and the update time to write it conditionally on. */
  public record Gathered(String documentId, String gathering, Timestamp updateTime) {}

  /**
   * Up to {@code limit} documents still {@code gathered}, from a random point of the collection, wrapping around
   * (automatic indexes, as {@link #pendingSubmissions}): what the reconciler checks against their gatherings.
   */
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
   * A document waiting to be gathered into a batch job: its size, since when it waits, the most documents a job
   * holding it may have ({@code jobLimit}, 0: no bound of its own; set when Gemini refused a job of it for its size),
   * how many jobs before gave it no answer that could be given to it ({@code reruns}), and the update time it was read
   * at (null when not read from the queue), which its assignment to a gathering is conditional on.
   */
  public record Queued(String documentId, long size, Instant queuedAt, int jobLimit, int reruns, Timestamp updateTime) {
    public Queued(String documentId, long size, Instant queuedAt) {
      this(documentId, size, queuedAt, 0, 0);
    }

    public Queued(String documentId, long size, Instant queuedAt, int jobLimit, int reruns) {
      this(documentId, size, queuedAt, jobLimit, reruns, null);
    }

    /** Back in the queue after a job: it waited a whole job already, so a job of it is due at once. */
    public boolean back() {
      return reruns > 0 || jobLimit > 0;
    }
  }

  /**
   * Up to {@code limit} queued documents, oldest first: an equality and an ordering on another field, so a composite
   * index (status, queuedAt), which terraform/firestore.tf declares.
   */
  public List<Queued> queued(int limit) {
    List<Queued> found = new ArrayList<>();
    Query oldestFirst = db.collection(Records.ANALYSES).whereEqualTo("status", DocumentStatus.QUEUED.value())
        .orderBy("queuedAt").limit(limit);
    for (QueryDocumentSnapshot doc : read(oldestFirst, "the queued documents")) {
      Instant queuedAt = instant(doc.getTimestamp("queuedAt"));
      Long size = doc.getLong("size");
      if (queuedAt != null && size != null) {
        Long jobLimit = doc.getLong(Records.JOB_LIMIT);
        found.add(new Queued(doc.getId(), size, queuedAt, jobLimit == null ? 0 : jobLimit.intValue(), reruns(doc),
            doc.getUpdateTime()));
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
      return db.collection(Records.ANALYSES).whereEqualTo("status", DocumentStatus.QUEUED.value()).limit(limit).count()
          .get()
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
    for (QueryDocumentSnapshot doc : scan(DocumentStatus.SUBMITTED, limit, startAtId, "the pending submissions")) {
      pending(doc).ifPresent(found::add);
    }
    return found;
  }

  /** Up to {@code limit} analyses of this status, in document-id order from {@code startAtId}, wrapping around. */
  private List<QueryDocumentSnapshot> scan(DocumentStatus status, int limit, String startAtId, String what) {
    Query withStatus = db.collection(Records.ANALYSES).whereEqualTo("status", status.value())
        .orderBy(FieldPath.documentId());
    List<QueryDocumentSnapshot> found = new ArrayList<>(read(withStatus.startAt(startAtId).limit(limit), what)
        .getDocuments());
    if (found.size() < limit) {
      found.addAll(read(withStatus.endBefore(startAtId).limit(limit - found.size()), what).getDocuments());
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
    Query oldestFirst = db.collection(Records.ANALYSES).whereEqualTo("status", DocumentStatus.DEFERRED.value())
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
}
