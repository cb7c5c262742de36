package dev.once.bench;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import dev.once.config.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.storage.ObjectFinalized;
import dev.once.local.storage.StorageStandIn;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the function benchmarks run against, all started by this process: the Firestore and Pub/Sub emulators
 * (with a results topic), the storage and Gemini stand-ins in-process, and a Firestore and a Storage client for
 * uploads and counts. Function instances are started from the deploy jar by the real invoker, configured only
 * through the environment, as the end-to-end tests do.
 */
public final class BenchStack implements AutoCloseable {
  public static final String PROJECT = "once-bench";
  public static final String BUCKET = "inbox";
  public static final String RESULTS_TOPIC = "projects/" + PROJECT + "/topics/results";
  static final String DOCUMENT_UPLOADED = "dev.once.functions.DocumentUploaded";
  private static final long CALL_TIMEOUT_SECONDS = 30;

  public final FirestoreEmulator firestore;
  public final PubSubEmulator pubsub;
  public final StorageStandIn storage;
  public final GeminiStandIn gemini;
  public final Firestore db;
  public final Storage gcs;
  public final Path logDir;

  private BenchStack(Path logDir) {
    this.logDir = logDir;
    this.firestore = FirestoreEmulator.start(logDir);
    this.pubsub = PubSubEmulator.start(logDir);
    createTopic(pubsub.hostPort(), RESULTS_TOPIC);
    this.storage = StorageStandIn.start();
    this.gemini = GeminiStandIn.start();
    this.db = FirestoreClients.forEmulator(PROJECT, firestore.hostPort());
    this.gcs = StorageOptions.http().setHost(storage.endpoint()).setProjectId(PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
  }

  public static BenchStack start() {
    return new BenchStack(Path.of("target/emulators"));
  }

  /** The environment Terraform gives DocumentUploaded (sync mode), pointed at this process's emulators and stand-ins. */
  public Map<String, String> environment() {
    Map<String, String> env = new HashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", PROJECT);
    env.put("FIRESTORE_EMULATOR_HOST", firestore.hostPort());
    env.put("PUBSUB_EMULATOR_HOST", pubsub.hostPort());
    env.put("STORAGE_EMULATOR_HOST", storage.endpoint());
    env.put("GEMINI_API_KEY", "bench-key"); // the stand-in accepts any key: not a credential
    env.put("GEMINI_BASE_URL", gemini.baseUrl());
    env.put("GEMINI_TIMEOUT_SECONDS", "30");
    env.put("RESULTS_TOPIC", RESULTS_TOPIC);
    env.put("ANALYSIS_MODE", "sync");
    return env;
  }

  /** A DocumentUploaded instance: the real invoker serving the deploy jar, logging to {@code logName}. */
  public FunctionProcess startDocumentUploaded(int port, List<String> jvmArgs, String logName) {
    FunctionProcess.Launch launch = new FunctionProcess.Launch(Artifacts.invokerJar(), Artifacts.functionJar(), jvmArgs);
    return FunctionProcess.start(launch, DOCUMENT_UPLOADED, port, environment(), logDir.resolve(logName));
  }

  /** Uploads a PDF with the real client; returns the stand-in's finalize notification of it. */
  public ObjectFinalized upload(String name, byte[] content) {
    Blob blob = gcs.create(BlobInfo.newBuilder(BUCKET, name).setContentType("application/pdf").build(), content);
    List<ObjectFinalized> sent = storage.notifications();
    for (int i = sent.size() - 1; i >= 0; i--) {
      ObjectFinalized notification = sent.get(i);
      if (notification.name().equals(name) && notification.generation() == blob.getGeneration()) {
        return notification;
      }
    }
    throw new IllegalStateException("the storage stand-in sent no notification for " + name);
  }

  /** The documents a query matches, counted by Firestore (an aggregation: no document is read here). */
  public long count(Query query) {
    try {
      return query.count().get().get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).getCount();
    } catch (Exception e) {
      throw new IllegalStateException("could not count " + query, e);
    }
  }

  private static void createTopic(String emulatorHost, String topic) {
    try (PubSubAdmin admin = new PubSubAdmin(emulatorHost)) {
      admin.createTopic(topic);
    }
  }

  @Override
  public void close() {
    gemini.close();
    storage.close();
    try {
      gcs.close();
      db.close();
    } catch (Exception ignored) {
      // shutting down
    }
    pubsub.close();
    firestore.close();
  }
}
