package dev.once.functions;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.storage.Storage;
import dev.once.config.Lazy;
import dev.once.config.Setting;
import dev.once.config.Settings;
import dev.once.entry.MalformedEvent;
import dev.once.entry.PubSubMessage;
import dev.once.entry.Report;
import dev.once.entry.StorageObject;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.functions.completion.CompletionFlow;
import dev.once.functions.delivery.DeliveryFlow;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.functions.reconcile.ReconcileFlow;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import io.cloudevents.CloudEvent;
import java.time.InstantSource;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one way into the functions' wiring from outside them, for the benchmarks and probes of {@code bench/}: one
 * function instance's clients, and its flows built from them as {@link Wiring} builds them for the functions. Nothing
 * else of this package is public but the functions. Not in the deploy jar (the shade plugin leaves it out): a JVM
 * serving that jar for a benchmark has it from the {@code benchmarks} jar beside it.
 */
public final class Benchmarks {
  private final Clients clients;
  private final Lazy<DocumentReader> reader;

  private Benchmarks(Clients clients) {
    this.clients = clients;
    this.reader = Lazy.of(() -> new DocumentReader(clients.storage.get()));
  }

  /** This process's instance, as the functions use it (its settings from the environment). */
  public static Benchmarks instance() {
    return new Benchmarks(Clients.instance());
  }

  /** A new instance on {@code settings}: its clients built on first use. */
  public static Benchmarks of(Settings settings) {
    return new Benchmarks(new Clients(settings));
  }

  /** With the Firestore client {@code firestore} makes (a counting one, say), and log lines going to {@code log}. */
  public static Benchmarks of(Settings settings, Supplier<Firestore> firestore, Log log) {
    return new Benchmarks(new Clients(settings, firestore, log));
  }

  /** DocumentUploaded's flow on this instance: a document in, its report out. */
  public Function<DocumentSource, Report> documentFlow() {
    DocumentFlow flow = Wiring.documentFlow(clients);
    return document -> flow.handle(document, DocumentFlow.key(document));
  }

  /** MessageDelivered's flow: a result message (its id, data and attributes) in, its report out. */
  public Delivery deliveryFlow() {
    DeliveryFlow flow = Wiring.deliveryFlow(clients);
    return (messageId, data, attributes) -> {
      PubSubMessage message = new PubSubMessage(messageId, data, attributes);
      return flow.deliver(message, DeliveryFlow.key(message));
    };
  }

  /** A delivery of one result message. */
  @FunctionalInterface
  public interface Delivery {
    Report deliver(String messageId, byte[] data, Map<String, String> attributes);
  }

  /** What the reconciler does for batch mode's gatherings: resumes unsubmitted ones, then submits the jobs due. */
  public Runnable batchSubmission() {
    BatchSubmitter submitter = Wiring.batchSubmitter(clients, reader, InstantSource.system());
    return () -> {
      submitter.resumeUnsubmitted();
      submitter.submitDue();
    };
  }

  /** One run of GeminiReconciler's, as Cloud Scheduler starts it every 10 minutes; its summary out. */
  public Supplier<Map<String, Object>> reconciliation() {
    ReconcileFlow flow = Wiring.reconcileFlow(clients);
    return () -> flow.run().toMap();
  }

  /** BatchCompleted's flow: a finished job's key in, its report out. */
  public Function<IdempotencyKey, Report> completionFlow() {
    CompletionFlow flow = Wiring.completionFlow(clients);
    return flow::complete;
  }

  /** The document's bytes at its generation, at most {@code maxBytes}, as DocumentUploaded reads them. */
  public byte[] read(DocumentSource document, long maxBytes) throws Exception {
    return reader.get().read(document, maxBytes);
  }

  public Settings settings() {
    return clients.settings;
  }

  /** A topic setting as a full name in this instance's project. */
  public String topic(Setting setting) {
    return clients.topic(setting);
  }

  public Once once() {
    return clients.once;
  }

  public Firestore firestore() {
    return clients.firestore.get();
  }

  public Storage storage() {
    return clients.storage.get();
  }

  public InvoiceAnalyzer analyzer() {
    return clients.analyzer.get();
  }

  public RecordQueries queries() {
    return clients.queries.get();
  }

  public MessagePublisher publisher() {
    return clients.publisher.get();
  }

  /** Shuts the Pub/Sub publisher down if it was built, as an instance would on its way out. */
  public void close() {
    if (clients.publisher.isBuilt()) {
      clients.publisher.get().close();
    }
  }

  /** What DocumentUploaded reads of a finalize event. */
  public static DocumentSource document(CloudEvent event) throws MalformedEvent {
    return DocumentSource.of(StorageObject.from(event));
  }

  /** A document's idempotency key, as DocumentUploaded makes it. */
  public static IdempotencyKey key(DocumentSource document) {
    return DocumentFlow.key(document);
  }
}
