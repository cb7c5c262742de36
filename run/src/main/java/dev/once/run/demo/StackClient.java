package dev.once.run.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.api.core.ApiFuture;
import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QuerySnapshot;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.budget.DaySpend;
import dev.once.budget.SpendCounters;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.local.Bounds;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.pipeline.RecordWrites;
import dev.once.run.StackInfo;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A running stack as the demo sees it from outside, through the real clients and the stand-ins' admin endpoints
 * only: Cloud Storage (upload), Firestore (ledger, analyses, billing), Pub/Sub (the results tap) and HTTP.
 */
final class StackClient implements StoredState, AutoCloseable {
  /** A hang guard on one read (the demo reads again when one fails): 20 s failed the demo on a loaded machine. */
  private static final long FIRESTORE_TIMEOUT_SECONDS = Bounds.CALL.toSeconds();

  private final StackInfo stack;
  private final Ports ports;
  private final Storage storage;
  private final Firestore db;
  private final FirestoreLedger ledger;
  private final PubSubAdmin pubsub;

  StackClient(StackInfo stack) {
    this.stack = stack;
    this.ports = stack.portSet();
    int callMillis = Math.toIntExact(Bounds.CALL.toMillis());
    HttpTransportOptions transport = HttpTransportOptions.newBuilder().setConnectTimeout(callMillis)
        .setReadTimeout(callMillis).build();
    this.storage = StorageOptions.http().setTransportOptions(transport).setHost(ports.url(Part.STORAGE))
        .setProjectId(stack.project()).setCredentials(NoCredentials.getInstance()).build().getService();
    this.db = FirestoreClients.forEmulator(stack.project(), ports.hostPort(Part.FIRESTORE));
    this.ledger = new FirestoreLedger(db, LedgerOptions.defaults().withCollection(stack.collection())
        .withRpcTimeout(Bounds.CALL));
    this.pubsub = new PubSubAdmin(ports.hostPort(Part.PUBSUB));
  }

  String url(Part part) {
    return ports.url(part);
  }

  Blob upload(String name, String contentType, byte[] content) {
    return storage.create(BlobInfo.newBuilder(Topology.BUCKET, name).setContentType(contentType).build(), content);
  }

  @Override
  public Optional<LedgerRecord> record(IdempotencyKey key, String effect) {
    return ledger.lookup(key, effect);
  }

  /** The analysis document of a document key (fixed id), if written. */
  Optional<DocumentSnapshot> analysis(IdempotencyKey key) {
    DocumentSnapshot snapshot = await(db.collection(RecordWrites.ANALYSES).document(key.documentId()).get());
    return snapshot.exists() ? Optional.of(snapshot) : Optional.empty();
  }

  /** Every billing entry for a key, by its {@code key} field, not its id: two entries would both be found. */
  @Override
  public int billingEntries(IdempotencyKey key) {
    QuerySnapshot entries = await(db.collection(RecordWrites.BILLING).whereEqualTo("key", key.value()).get());
    return entries.size();
  }

  @Override
  public long costMicroUsd(IdempotencyKey key) {
    DocumentSnapshot bill = await(db.collection(RecordWrites.BILLING).document(key.documentId()).get());
    Long cost = bill.exists() ? bill.getLong("costMicroUsd") : null;
    return cost == null ? 0 : cost;
  }

  /** The day in ONCE_BUDGET_TIMEZONE (as this process's environment sets it for dev/run's functions; else UTC). */
  @Override
  public DaySpend spendToday() {
    ZoneId zone = Settings.fromEnvironment()
        .optional(OnceSetting.ONCE_BUDGET_TIMEZONE).map(ZoneId::of)
        .orElse(ZoneOffset.UTC);
    SpendCounters counters = new SpendCounters(ledger);
    return counters.read(counters.today(zone));
  }

  /** Every analysis for a key, by its {@code key} field. */
  @Override
  public int analyses(IdempotencyKey key) {
    return await(db.collection(RecordWrites.ANALYSES).whereEqualTo("key", key.value()).get()).size();
  }

  /** What the results tap holds now (pulled and acknowledged: the caller keeps it). */
  List<PubsubMessage> pullResults() {
    return new ArrayList<>(pubsub.pull(Topology.subscription(stack.project(), Topology.RESULTS_TAP)));
  }

  JsonNode get(Part part, String path) {
    return Http.get(ports.url(part) + path);
  }

  JsonNode post(Part part, String path) {
    return Http.post(ports.url(part) + path);
  }

  /** What Cloud Scheduler does every ten minutes in production. */
  JsonNode reconcile() {
    return Http.post(ports.url(Part.GEMINI_RECONCILER) + "/", Http.RECONCILE_TIMEOUT);
  }

  StackInfo stack() {
    return stack;
  }

  private static <T> T await(ApiFuture<T> future) {
    try {
      return future.get(FIRESTORE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading Firestore", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not read Firestore: " + e, e);
    }
  }

  @Override
  public void close() {
    pubsub.close();
    try {
      db.close();
    } catch (Exception e) {
      // closing a client of an emulator that may be gone already
    }
    try {
      storage.close();
    } catch (Exception e) {
      // same
    }
  }
}
