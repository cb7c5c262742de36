package dev.once.firestore;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import dev.once.local.Await;
import dev.once.local.emulator.FirestoreEmulator;
import java.time.Duration;
import java.time.Instant;

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

  /** Waits (with a deadline) until Firestore's own clock, read from its answers, has moved on by {@code duration}. */
  public static void passTime(Duration duration) {
    Instant until = serverNow().plus(duration);
    Await.until(duration.plusSeconds(15), () -> !serverNow().isBefore(until), "Firestore's clock to pass " + until);
  }

  private static Instant serverNow() {
    try {
      Timestamp read = client().collection("probe").document("clock").get().get().getReadTime();
      return Instant.ofEpochSecond(read.getSeconds(), read.getNanos());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
