package dev.once.cli;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import com.google.genai.errors.ClientException;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.gemini.ModelWatch;
import dev.once.ledger.LedgerOptions;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.observe.Log;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The test JVM's Firestore emulator, a client on it, and the environment that points {@code once} at it. */
public final class CliFirestore {
  public static final String PROJECT = "once-cli-test";
  private static Firestore client;

  private CliFirestore() {}

  public static synchronized Firestore db() {
    if (client == null) {
      client = connect();
    }
    return client;
  }

  /** A client of its own, as another process (a function instance, the tool) would have. */
  public static Firestore connect() {
    return FirestoreClients.forEmulator(PROJECT, FirestoreEmulator.shared().hostPort());
  }

  public static FirestoreLedger ledger() {
    return new FirestoreLedger(db(), LedgerOptions.defaults());
  }

  public static void clear() {
    FirestoreEmulator.shared().clear(PROJECT);
  }

  public static Map<String, String> env() {
    return Map.of("FIRESTORE_EMULATOR_HOST", FirestoreEmulator.shared().hostPort(), "GOOGLE_CLOUD_PROJECT", PROJECT);
  }

  /** Writes a document as the pipeline would have (fields given), waiting for the commit. */
  public static void put(String collection, String id, Map<String, Object> fields) {
    try {
      db().collection(collection).document(id).set(fields).get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("could not write " + collection + "/" + id, e);
    }
  }

  public static Timestamp ago(long seconds) {
    Instant at = Instant.now().minusSeconds(seconds);
    return Timestamp.ofTimeSecondsAndNanos(at.getEpochSecond(), at.getNano());
  }

  /** What a function records when Gemini answers 404 for the model it names (the functions' own words). */
  public static String modelRefused(String model) {
    return new ModelWatch(Log.to(new PrintStream(
        OutputStream.nullOutputStream()))).failed(model, new ClientException(404,
            "NOT_FOUND", "This model models/" + model + " is no longer available."))
        .getMessage();
  }
}
