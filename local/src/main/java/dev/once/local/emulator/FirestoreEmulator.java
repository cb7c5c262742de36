package dev.once.local.emulator;

import dev.once.local.process.ChildProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The Cloud SDK's Firestore emulator, started from its jar on a free loopback port. Tests share one per JVM
 * ({@link #shared()}) and {@link #clear(String)} it between tests.
 */
public final class FirestoreEmulator extends Emulator {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static FirestoreEmulator shared;

  private final Path logDir;

  private FirestoreEmulator(Path logDir, int port) {
    super(port, launch(port, logDir, null));
    this.logDir = logDir;
  }

  /** Starts an emulator on a free port, logging under {@code logDir}. */
  public static FirestoreEmulator start(Path logDir) {
    return start(FreePort.pick(), logDir);
  }

  public static FirestoreEmulator start(int port, Path logDir) {
    return new FirestoreEmulator(logDir, port);
  }

  /** One emulator for the whole test JVM, logging under target/emulators; stopped when the JVM exits. */
  public static synchronized FirestoreEmulator shared() {
    if (shared == null || !shared.isAlive()) {
      shared = start(sharedLogDir());
    }
    return shared;
  }

  private static ChildProcess launch(int port, Path logDir, Path importFrom) {
    List<String> args = new ArrayList<>();
    args.add("-Djava.util.logging.config.file=" + loggingConfig(logDir));
    args.add("-cp");
    args.add(CloudSdk.firestoreJar().toString());
    args.add("com.google.cloud.datastore.emulator.firestore.CloudFirestore");
    args.add("--host=127.0.0.1");
    args.add("--port=" + port);
    if (importFrom != null) {
      args.add("--import-data=" + importFrom);
    }
    return launch("Firestore", args, port, logDir.resolve("firestore-" + port + ".log"));
  }

  /**
   * The emulator's logging configuration, copied next to its log (its JVM cannot read this one's class path): the
   * JDK's defaults without a stack trace per failed RPC ({@code firestore-logging.properties} says why).
   */
  private static Path loggingConfig(Path logDir) {
    Path file = logDir.toAbsolutePath().resolve("firestore-logging.properties");
    try (InputStream config = FirestoreEmulator.class.getResourceAsStream("firestore-logging.properties")) {
      if (config == null) {
        throw new IllegalStateException("firestore-logging.properties is missing from the class path");
      }
      Files.createDirectories(file.getParent());
      Path next = Files.createTempFile(file.getParent(), "firestore-logging", ".tmp");
      Files.copy(config, next, StandardCopyOption.REPLACE_EXISTING);
      // Emulators of several JVMs may share the directory: each writes a whole file and moves it in place.
      Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("could not write " + file, e);
    }
  }

  /** Deletes every document of the project's default database (the emulator's own endpoint). */
  public void clear(String projectId) {
    send("DELETE", "/emulator/v1/projects/" + projectId + "/databases/(default)/documents", null);
  }

  /**
   * Stops the emulator and starts it again on the same port with the data it held: an outage that loses
   * nothing that was committed.
   */
  public synchronized void restartKeepingData(String projectId, Runnable whileDown) {
    try {
      Path exportDir = Files.createTempDirectory(logDir.toAbsolutePath(), "firestore-export-");
      send(
          "POST",
          "/emulator/v1/projects/" + projectId + ":export",
          "{\"database\":\"projects/" + projectId + "/databases/(default)\",\"export_directory\":\""
              + exportDir.toAbsolutePath() + "\"}");
      process().close();
      whileDown.run();
      replace(launch(port(), logDir, metadataFile(exportDir)));
    } catch (IOException e) {
      throw new IllegalStateException("could not restart the Firestore emulator", e);
    }
  }

  private static Path metadataFile(Path exportDir) throws IOException {
    try (Stream<Path> files = Files.walk(exportDir)) {
      return files.filter(p -> p.toString().endsWith(".overall_export_metadata")).findFirst()
          .orElseThrow(() -> new IOException("the emulator wrote no export under " + exportDir));
    }
  }

  private void send(String method, String path, String json) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://" + hostPort() + path)).timeout(Duration.ofSeconds(30));
    request.method(
        method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
    if (json != null) {
      request.header("Content-Type", "application/json");
    }
    try {
      HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "Firestore emulator " + method + " " + path + " answered " + response.statusCode() + ": "
                + response.body());
      }
    } catch (IOException e) {
      throw new IllegalStateException("Firestore emulator " + method + " " + path + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
