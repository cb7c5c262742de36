package dev.once.local.emulator;

import dev.once.local.Bounds;
import dev.once.local.process.ChildProcess;
import dev.once.local.process.Jvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * An emulator JVM started from the Cloud SDK's jar on 127.0.0.1, its output in a log file; ready once its root URL
 * answers 200.
 */
public abstract class Emulator implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final int port;
  private volatile ChildProcess process;

  Emulator(int port, ChildProcess process) {
    this.port = port;
    this.process = process;
  }

  /** Where the emulators shared by a test JVM log: {@code once.logDir}, else target/emulators. */
  static Path sharedLogDir() {
    return Path.of(System.getProperty("once.logDir", "target/emulators"));
  }

  /**
   * C1 only, the serial collector and no verification, as for the functions ({@link Jvm#quick}): an emulator lives
   * for a test class or a dev/run session on a machine it shares, where C2's compiles and G1's threads cost more CPU
   * than they save (one IT class's Firestore emulator: 22.5 CPU-s with the JDK's defaults, 12.9 with these).
   */
  private static final List<String> FLAGS = Stream.concat(
      Stream.of("-Duser.language=en", "-Xss1m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"),
      Jvm.NO_VERIFY.stream()).toList();

  static ChildProcess launch(String name, List<String> javaArgs, int port, Path log) {
    List<String> command = new ArrayList<>(List.of(Jvm.java()));
    command.addAll(FLAGS);
    command.addAll(javaArgs);
    ChildProcess process = ChildProcess.start(name + " emulator", command, Map.of(), log);
    // An emulator's start is seconds of CPU: beside three forks' stacks it can take minutes. An exit ends the wait.
    process.awaitReady(() -> answers(port), Bounds.START, Duration.ofMillis(100));
    return process;
  }

  private static boolean answers(int port) {
    HttpRequest ping = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
        .timeout(Duration.ofSeconds(2)).build();
    try {
      return HTTP.send(ping, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException notYet) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** A new process in place of the stopped one (a restart). */
  void replace(ChildProcess next) {
    process = next;
  }

  /** host:port, the value of {@code FIRESTORE_EMULATOR_HOST} or {@code PUBSUB_EMULATOR_HOST}. */
  public String hostPort() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return process.log();
  }

  public ChildProcess process() {
    return process;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public void close() {
    process.close();
  }
}
