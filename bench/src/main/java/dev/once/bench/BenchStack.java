package dev.once.bench;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import com.google.pubsub.v1.PubsubMessage;
import dev.once.firestore.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.emulator.PubSubEmulator;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.stack.FunctionJars;
import dev.once.local.stack.LocalStack;
import dev.once.local.stack.Part;
import dev.once.local.storage.StorageStandIn;
import dev.once.wire.storage.ObjectFinalized;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the function benchmarks run against: a {@link LocalStack} of their own (its own Firestore and Pub/Sub
 * emulators, the stand-ins in this process, no relay and no functions of its own), and a Firestore and a Storage
 * client for uploads and counts. DocumentUploaded instances are started from the deploy jar by the real invoker,
 * configured only through the environment, as the end-to-end tests do.
 */
public final class BenchStack implements AutoCloseable {
  public static final String PROJECT = "once-bench";
  public static final String BUCKET = "inbox";
  static final String DOCUMENT_UPLOADED = Part.DOCUMENT_UPLOADED.target();
  private static final long CALL_TIMEOUT_SECONDS = 30;

  private final LocalStack stack;
  public final Firestore db;
  public final Storage gcs;
  public final Path logDir;

  private BenchStack(LocalStack stack) {
    this.stack = stack;
    this.logDir = stack.logDir();
    this.db = FirestoreClients.forEmulator(PROJECT, stack.firestore().hostPort());
    this.gcs = StorageOptions.http().setHost(stack.storage().endpoint()).setProjectId(PROJECT)
        .setCredentials(NoCredentials.getInstance()).build().getService();
  }

  public static BenchStack start() {
    return new BenchStack(builder().jars(new FunctionJars(Artifacts.invokerJar(), Artifacts.functionJar(), List.of()))
        .start());
  }

  /** The stack for flows run in this process only (no function instance): no jar needed, as in a test. */
  public static BenchStack inProcess() {
    return new BenchStack(builder().start());
  }

  private static LocalStack.Builder builder() {
    return LocalStack.builder(PROJECT, Path.of("target/emulators")).withoutFunctions()
        .env("GEMINI_TIMEOUT_SECONDS", "30").env("ANALYSIS_MODE", "sync");
  }

  public StorageStandIn storage() {
    return stack.storage();
  }

  public GeminiStandIn gemini() {
    return stack.gemini();
  }

  public FirestoreEmulator firestore() {
    return stack.firestore();
  }

  public PubSubEmulator pubsub() {
    return stack.pubsubEmulator();
  }

  /** The environment Terraform gives DocumentUploaded (sync mode), pointed at this stack. */
  public Map<String, String> environment() {
    return stack.environment();
  }

  /** A DocumentUploaded instance: the real invoker serving the deploy jar, logging to {@code logName}. */
  public FunctionProcess startDocumentUploaded(List<String> jvmArgs, String logName) {
    return stack.startInstance(Part.DOCUMENT_UPLOADED, jvmArgs, logName);
  }

  /** An instance of {@code function}: the real invoker serving the deploy jar, with this stack's environment. */
  public FunctionProcess startInstance(Part function, List<String> jvmArgs, String logName) {
    return stack.startInstance(function, jvmArgs, logName);
  }

  /** The secret the stack's static Gemini webhooks are signed with (GEMINI_WEBHOOK_SECRET). */
  public String webhookSecret() {
    return stack.webhookSecret();
  }

  /** Uploads a PDF with the real client; returns the stand-in's finalize notification of it. */
  public ObjectFinalized upload(String name, byte[] content) {
    Blob blob = gcs.create(BlobInfo.newBuilder(BUCKET, name).setContentType("application/pdf").build(), content);
    List<ObjectFinalized> sent = stack.storage().notifications();
    for (int i = sent.size() - 1; i >= 0; i--) {
      ObjectFinalized notification = sent.get(i);
      if (notification.name().equals(name) && notification.generation() == blob.getGeneration()) {
        return notification;
      }
    }
    throw new IllegalStateException("the storage stand-in sent no notification for " + name);
  }

  /** The results published since the last pull (the stack's tap subscription on the results topic). */
  public List<PubsubMessage> pullResults() {
    return stack.pubsub().pull(stack.resultsTap());
  }

  /** The documents a query matches, counted by Firestore (an aggregation: no document is read here). */
  public long count(Query query) {
    try {
      return query.count().get().get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).getCount();
    } catch (Exception e) {
      throw new IllegalStateException("could not count " + query, e);
    }
  }

  @Override
  public void close() {
    try {
      gcs.close();
      db.close();
    } catch (Exception ignored) {
      // shutting down
    }
    stack.close();
  }
}
