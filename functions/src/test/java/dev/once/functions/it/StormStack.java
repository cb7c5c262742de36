package dev.once.functions.it;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.config.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.FreePort;
import dev.once.local.emulator.PubSubAdmin;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.storage.ObjectFinalized;
import dev.once.local.storage.StorageStandIn;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Several DocumentUploaded instances side by side, as the platform scales one function out, with what they need
 * (the shared emulators, the storage and Gemini stand-ins, a results topic) and nothing else: no relay, because a
 * storm test sends the events itself, spread over the instances. Its own Firestore project, so its counts are
 * its own.
 */
final class StormStack implements AutoCloseable {
  static final String PROJECT = "once-storm";
  static final String BUCKET = "inbox";
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  final StorageStandIn storage;
  final GeminiStandIn gemini;
  final Firestore db;
  final Storage gcs;
  final PubSubAdmin pubsub;
  final String resultsTap;
  private final String resultsTopic;
  private final List<FunctionProcess> instances = new ArrayList<>();

  private StormStack(int processes, Path logDir) {
    FirestoreEmulator firestore = FirestoreEmulator.shared();
    firestore.clear(PROJECT);
    PubSubEmulator pubsubEmulator = PubSubEmulator.shared();
    this.db = FirestoreClients.forEmulator(PROJECT, firestore.hostPort());
    this.pubsub = new PubSubAdmin(pubsubEmulator.hostPort());
    String suffix = Long.toString(System.nanoTime(), 36);
    this.resultsTopic = "projects/" + PROJECT + "/topics/results-" + suffix;
    this.resultsTap = "projects/" + PROJECT + "/subscriptions/results-tap-" + suffix;
    pubsub.createTopic(resultsTopic);
    pubsub.createSubscription(resultsTap, resultsTopic);
    this.storage = StorageStandIn.start();
    this.gemini = GeminiStandIn.start();
    this.gcs = StorageOptions.http().setHost(storage.endpoint()).setProjectId(PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
    Map<String, String> env = environment(firestore.hostPort(), pubsubEmulator.hostPort());
    // Each invoker takes seconds to start: start them together.
    List<CompletableFuture<FunctionProcess>> starting = new ArrayList<>();
    for (int i = 0; i < processes; i++) {
      Path log = logDir.resolve("DocumentUploaded-" + i + ".log");
      starting.add(CompletableFuture.supplyAsync(() -> FunctionProcess.start(launch(), "dev.once.functions.DocumentUploaded",
          FreePort.pick(), env, log)));
    }
    for (CompletableFuture<FunctionProcess> instance : starting) {
      instances.add(instance.orTimeout(3, TimeUnit.MINUTES).join());
    }
  }

  static StormStack start(int processes) {
    return new StormStack(processes,
        Path.of(System.getProperty("once.logDir", "target/it-logs"), "storm-" + System.nanoTime()));
  }

  private static FunctionProcess.Launch launch() {
    return new FunctionProcess.Launch(Path.of(System.getProperty("once.invokerJar")),
        Path.of(System.getProperty("once.functionJar")),
        List.of("-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
  }

  private Map<String, String> environment(String firestoreHost, String pubsubHost) {
    Map<String, String> env = new HashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", PROJECT);
    env.put("FIRESTORE_EMULATOR_HOST", firestoreHost);
    env.put("PUBSUB_EMULATOR_HOST", pubsubHost);
    env.put("STORAGE_EMULATOR_HOST", storage.endpoint());
    env.put("GEMINI_API_KEY", "local-test-key"); // the stand-in accepts any key
    env.put("GEMINI_BASE_URL", gemini.baseUrl());
    env.put("GEMINI_TIMEOUT_SECONDS", "10");
    env.put("RESULTS_TOPIC", resultsTopic);
    env.put("ANALYSIS_MODE", "sync");
    return env;
  }

  List<URI> urls() {
    return instances.stream().map(FunctionProcess::url).toList();
  }

  /** Uploads a document; its bucket notification is the first of the deliveries a storm sends. */
  ObjectFinalized upload(String name, byte[] content, String contentType) {
    Blob blob = gcs.create(BlobInfo.newBuilder(BUCKET, name).setContentType(contentType).build(), content);
    return storage.notifications().stream()
        .filter(n -> n.name().equals(name) && n.generation() == blob.getGeneration())
        .findFirst()
        .orElseThrow(() -> new AssertionError("the stand-in sent no notification for " + name));
  }

  List<QueryDocumentSnapshot> documents(String collection) {
    try {
      return db.collection(collection).get().get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS).getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + collection, e);
    }
  }

  /** Whatever the results topic received since the last call. */
  List<PubsubMessage> pullResults() {
    return pubsub.pull(resultsTap);
  }

  @Override
  public void close() {
    instances.forEach(FunctionProcess::close);
    gemini.close();
    storage.close();
    pubsub.close();
    try {
      gcs.close();
      db.close();
    } catch (Exception ignored) {
      // test teardown
    }
  }
}
