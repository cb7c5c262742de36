package dev.once.local.emulator;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Finds the emulator jars of the installed Google Cloud SDK. */
public final class CloudSdk {
  private static final Path DEFAULT_ROOT = Path.of("/usr/lib/google-cloud-sdk");

  private CloudSdk() {}

  /** CLOUDSDK_ROOT, else the SDK that gcloud on PATH belongs to, else /usr/lib/google-cloud-sdk. */
  public static Path root() {
    String fromEnv = System.getenv("CLOUDSDK_ROOT");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return Path.of(fromEnv);
    }
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(File.pathSeparator)) {
      Path gcloud = Path.of(dir, "gcloud");
      if (Files.isExecutable(gcloud)) {
        try {
          Path root = gcloud.toRealPath().getParent().getParent();
          if (Files.isDirectory(root.resolve("platform"))) {
            return root;
          }
        } catch (IOException | RuntimeException ignored) {
          // fall through to the default location
        }
      }
    }
    return DEFAULT_ROOT;
  }

  public static Path firestoreJar() {
    Path jar = root().resolve("platform/cloud-firestore-emulator/cloud-firestore-emulator.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          "the Cloud SDK Firestore emulator is missing: no " + jar
              + " (install the Cloud SDK component cloud-firestore-emulator, or set CLOUDSDK_ROOT)");
    }
    return jar;
  }

  public static Path pubSubJar() {
    Path lib = root().resolve("platform/pubsub-emulator/lib");
    try (Stream<Path> jars = Files.list(lib)) {
      return jars.filter(p -> p.getFileName().toString().matches("cloud-pubsub-emulator-.*\\.jar"))
          .findFirst()
          .orElseThrow();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException(
          "the Cloud SDK Pub/Sub emulator is missing under " + lib
              + " (install the Cloud SDK component pubsub-emulator, or set CLOUDSDK_ROOT)");
    }
  }
}
