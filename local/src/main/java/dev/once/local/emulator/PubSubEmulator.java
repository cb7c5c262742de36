package dev.once.local.emulator;

import dev.once.local.process.ChildProcess;
import java.nio.file.Path;
import java.util.List;

/** The Cloud SDK's Pub/Sub emulator, started from its jar on a free loopback port. */
public final class PubSubEmulator implements AutoCloseable {
  private static PubSubEmulator shared;

  private final int port;
  private final ChildProcess process;

  private PubSubEmulator(int port, ChildProcess process) {
    this.port = port;
    this.process = process;
  }

  public static PubSubEmulator start(Path logDir) {
    return start(FreePort.pick(), logDir);
  }

  public static PubSubEmulator start(int port, Path logDir) {
    List<String> args =
        List.of("-jar", CloudSdk.pubSubJar().toString(), "--host=127.0.0.1", "--port=" + port);
    return new PubSubEmulator(port, Emulators.start("Pub/Sub", args, port, logDir.resolve("pubsub-" + port + ".log")));
  }

  /** One emulator for the whole test JVM, logging under target/emulators; stopped when the JVM exits. */
  public static synchronized PubSubEmulator shared() {
    if (shared == null || !shared.process.isAlive()) {
      shared = start(FirestoreEmulator.sharedLogDir());
    }
    return shared;
  }

  /** host:port, the value of PUBSUB_EMULATOR_HOST. */
  public String hostPort() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  /** Where the emulator logs. */
  public Path log() {
    return process.log();
  }

  public ChildProcess process() {
    return process;
  }

  @Override
  public void close() {
    process.close();
  }
}
