package dev.once.testing;

import com.google.cloud.firestore.Firestore;
import dev.once.config.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;

/** A Firestore client on the test JVM's shared emulator; {@link #clear()} empties it between tests. */
public final class TestFirestore {
  public static final String PROJECT = "once-test";
  private static Firestore client;

  private TestFirestore() {}

  public static synchronized Firestore client() {
    if (client == null) {
      client = connect();
    }
    return client;
  }

  /** A second client, as a second function instance would have. */
  public static Firestore connect() {
    return FirestoreClients.forEmulator(PROJECT, FirestoreEmulator.shared().hostPort());
  }

  public static void clear() {
    FirestoreEmulator.shared().clear(PROJECT);
  }
}
