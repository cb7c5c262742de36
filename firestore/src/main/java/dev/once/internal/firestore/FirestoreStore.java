package dev.once.internal.firestore;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutures;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.AggregateField;
import com.google.cloud.firestore.AggregateQuerySnapshot;
import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.TransactionOptions;
import com.google.cloud.firestore.UpdateBuilder;
import com.google.cloud.firestore.WriteBatch;
import com.google.cloud.firestore.WriteResult;
import com.google.common.util.concurrent.MoreExecutors;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerUnavailable;
import dev.once.ledger.SideWrites;
import dev.once.ledger.spi.RecordStore;
import dev.once.ledger.spi.RecordStore.Refused.Why;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The ledger's records in a Firestore collection: creates with their precondition, fenced updates by update time,
 * transactions, Firestore's read and commit times as the store's time, and what Firestore's failures mean.
 */
public final class FirestoreStore implements RecordStore {
  private final Firestore db;
  private final LedgerOptions config;
  private final CollectionReference records;
  private final ServerClock serverClock;
  private final TransactionOptions transactionOptions;
  private final InstantSource instanceClock;
  /** How long sums are read by id after the index was found missing (or building) before it is tried again. */
  private static final Duration UNINDEXED_PAUSE = Duration.ofMinutes(10);
  /**
   * Until when sums are read document by document, after the database refused an aggregation for want of its index
   * (missing, or still building after a deployment): the index is tried again after {@link #UNINDEXED_PAUSE}.
   */
  private volatile Instant readSumsUntil = Instant.MIN;

  public FirestoreStore(Firestore db, LedgerOptions config, InstantSource instanceClock) {
    this.db = db;
    this.config = config;
    this.records = db.collection(config.collection());
    this.serverClock = new ServerClock(instanceClock);
    this.instanceClock = instanceClock;
    this.transactionOptions =
        TransactionOptions.createReadWriteOptionsBuilder().setNumberOfAttempts(config.takeoverAttempts()).build();
  }

  @Override
  public Snapshot read(String id) {
    return snapshot(await(records.document(id).get(), "read the ledger record"));
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    DocumentReference[] refs = ids.stream().map(id -> FirestoreWrites.ref(db, collection, id))
        .toArray(DocumentReference[]::new);
    Map<String, Map<String, Object>> found = new LinkedHashMap<>();
    for (DocumentSnapshot snapshot : await(db.getAll(refs), "read " + collection)) {
      serverClock.observe(snapshot.getReadTime());
      if (snapshot.exists()) {
        found.put(snapshot.getId(), fields(snapshot));
      }
    }
    return found;
  }

  /**
   * One aggregation over the documents whose {@code field} is {@code value}: billed one read for up to 1,000 of
   * them, where reading them by id bills each. Firestore sums from an index: ordered by the summed fields after the
   * equality, the query names the composite index that serves it (the field, then the summed fields, in this order),
   * holding only documents that have them all — terraform/firestore.tf declares the spending guard's. A database
   * without it refuses the aggregation: this instance then reads the documents by id instead, and tries the index
   * again {@link #UNINDEXED_PAUSE} later.
   */
  @Override
  public Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields) {
    if (instanceClock.instant().isBefore(readSumsUntil)) {
      return RecordStore.super.sum(collection, ids, field, value, fields);
    }
    Query query = db.collection(collection).whereEqualTo(field, value);
    for (String summed : fields) {
      query = query.orderBy(summed); // leaves out a document lacking the field, as Sums does
    }
    List<AggregateField> sums = fields.stream().<AggregateField>map(AggregateField::sum).toList();
    AggregateQuerySnapshot snapshot;
    try {
      snapshot = await(query.aggregate(sums.get(0), sums.subList(1, sums.size()).toArray(AggregateField[]::new)).get(),
          "sum " + collection);
    } catch (RuntimeException e) {
      if (!refusedAsUnindexed(e)) {
        throw e;
      }
      readSumsUntil = instanceClock.instant().plus(UNINDEXED_PAUSE);
      return RecordStore.super.sum(collection, ids, field, value, fields);
    }
    serverClock.observe(snapshot.getReadTime());
    Map<String, Long> found = new LinkedHashMap<>();
    for (int i = 0; i < fields.size(); i++) {
      // Null over no document; a whole number while every value added is one (the counters are).
      found.put(fields.get(i), snapshot.get(sums.get(i)) instanceof Number sum ? sum.longValue() : 0L);
    }
    return found;
  }

  /** The database cannot run the aggregation for want of its index (FAILED_PRECONDITION: missing, or building). */
  private static boolean refusedAsUnindexed(RuntimeException e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof ApiException api) {
        return api.getStatusCode().getCode() == StatusCode.Code.FAILED_PRECONDITION;
      }
    }
    return false;
  }

  @Override
  public List<Instant> commit(List<RecordWrite> writes, SideWrites sideWrites) {
    WriteBatch batch = db.batch();
    for (RecordWrite write : writes) {
      add(batch, write);
    }
    sideWrites.addTo(new FirestoreWrites(db, batch));
    try {
      List<WriteResult> results = await(batch.commit(), "commit");
      if (!results.isEmpty()) {
        serverClock.observe(results.get(0).getUpdateTime());
      }
      return results.subList(0, writes.size()).stream().map(result -> Times.instant(result.getUpdateTime())).toList();
    } catch (RuntimeException e) {
      throw refusal(e);
    }
  }

  /*
   * Transactions here are asynchronous on purpose: the client runs a transaction's callback on its own small
   * executor, and a callback that blocks on its read starves that executor once a handful of transactions run
   * at once (16 concurrent takeovers of one record hung every Firestore call of the process).
   */
  @Override
  public <T> T transact(String id, Function<Snapshot, Decision<T>> body) {
    DocumentReference ref = records.document(id);
    try {
      return await(db.runAsyncTransaction(tx -> ApiFutures.transform(tx.get(ref), read -> {
        Decision<T> decision = body.apply(snapshot(read));
        for (RecordWrite write : decision.records()) {
          add(tx, write);
        }
        decision.writes().addTo(new FirestoreWrites(db, tx));
        return decision.result();
      }, MoreExecutors.directExecutor()), transactionOptions), "run a ledger transaction");
    } catch (RuntimeException e) {
      throw refusal(e);
    }
  }

  @Override
  public Optional<Instant> time() {
    return serverClock.calibrated() ? Optional.of(serverClock.now()) : Optional.empty();
  }

  private void add(UpdateBuilder<?> builder, RecordWrite write) {
    DocumentReference ref = records.document(write.id());
    Map<String, Object> fields = FirestoreWrites.resolve(write.fields());
    switch (write.precondition()) {
      case Precondition.Absent absent -> builder.create(ref, fields);
      case Precondition.UpdatedAt at ->
        builder.update(ref, fields, com.google.cloud.firestore.Precondition.updatedAt(Times.timestamp(at.time())));
      case Precondition.AsRead asRead -> builder.update(ref, fields);
    }
  }

  private Snapshot snapshot(DocumentSnapshot snapshot) {
    serverClock.observe(snapshot.getReadTime());
    return new Snapshot(snapshot.getId(), snapshot.exists() ? fields(snapshot) : null,
        Times.instant(snapshot.getUpdateTime()), Times.instant(snapshot.getReadTime()));
  }

  /** A document's fields, with Firestore's timestamps as Instants at any depth (a record's tries and history too). */
  private static Map<String, Object> fields(DocumentSnapshot snapshot) {
    return instants(snapshot.getData());
  }

  private static Map<String, Object> instants(Map<String, Object> fields) {
    Map<String, Object> read = new LinkedHashMap<>();
    fields.forEach((name, value) -> read.put(name, instant(value)));
    return read;
  }

  @SuppressWarnings("unchecked")
  private static Object instant(Object value) {
    return switch (value) {
      case Timestamp time -> Times.instant(time);
      case Map<?, ?> map -> instants((Map<String, Object>) map);
      case List<?> list -> list.stream().map(FirestoreStore::instant).toList();
      case null, default -> value;
    };
  }

  /**
   * What a failed commit means for the ledger, or the failure itself when it means nothing special. A timeout, a
   * reset or a 5xx may have been applied, its answer lost.
   */
  private static RuntimeException refusal(RuntimeException e) {
    if (e instanceof LeaseLost) {
      return e;
    }
    if (StatusCodes.is(e, "ALREADY_EXISTS")) {
      return new Refused(Why.EXISTS, e);
    }
    if (StatusCodes.is(e, "ABORTED")) {
      return new Refused(Why.CONTENDED, e);
    }
    if (StatusCodes.is(e, "FAILED_PRECONDITION") || StatusCodes.is(e, "NOT_FOUND")) {
      return new Refused(Why.STALE, e);
    }
    if (e instanceof LedgerUnavailable || StatusCodes.is(e, "DEADLINE_EXCEEDED") || StatusCodes.is(e, "UNAVAILABLE")
        || StatusCodes.is(e, "INTERNAL")) {
      return new Refused(Why.UNKNOWN, e);
    }
    return e;
  }

  /** Waits at most the configured RPC timeout, and translates what Firestore's failures mean here. */
  private <T> T await(ApiFuture<T> future, String what) {
    try {
      return future.get(config.rpcTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new LedgerUnavailable("Firestore did not answer within " + config.rpcTimeout() + " to " + what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LedgerUnavailable("interrupted while waiting for Firestore to " + what, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof LeaseLost lost) {
        throw lost;
      }
      if (StatusCodes.is(cause, "ABORTED")) {
        throw new LedgerUnavailable("Firestore aborted the call to " + what + " under contention"
            + " (a transaction gives up after " + config.takeoverAttempts() + " attempts)", cause);
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new LedgerUnavailable("Firestore failed to " + what, cause);
    }
  }
}
