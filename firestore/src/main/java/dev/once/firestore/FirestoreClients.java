package dev.once.firestore;

import com.google.cloud.NoCredentials;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;

/** Builds the Firestore client, honouring FIRESTORE_EMULATOR_HOST. */
public final class FirestoreClients {
  private FirestoreClients() {}

  public static Firestore create(Settings settings) {
    FirestoreOptions.Builder options = FirestoreOptions.newBuilder();
    settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT).ifPresent(options::setProjectId);
    settings.optional(OnceSetting.FIRESTORE_EMULATOR_HOST).ifPresent(host -> forEmulator(options, host));
    return options.build().getService();
  }

  /**
   * The emulator speaks plaintext and wants no credentials. With {@code NoCredentials} the client dials
   * {@code host} in plaintext; {@code setEmulatorHost} alone would first look for Google credentials.
   */
  public static Firestore forEmulator(String projectId, String hostPort) {
    FirestoreOptions.Builder options = FirestoreOptions.newBuilder().setProjectId(projectId);
    forEmulator(options, hostPort);
    return options.build().getService();
  }

  private static void forEmulator(FirestoreOptions.Builder options, String hostPort) {
    options.setHost(hostPort).setCredentials(NoCredentials.getInstance());
  }
}
