package dev.once.local.emulator;

import dev.once.local.process.ChildProcess;
import java.nio.file.Path;
import java.util.List;

/** The Cloud SDK's Pub/Sub emulator, started from its jar on a free loopback port. */
public final class PubSubEmulator extends Emulator {
  private static PubSubEmulator shared;

  private PubSubEmulator(int port, ChildProcess process) {
    super(port, process);
  }

  public static PubSubEmulator start(Path logDir) {
    return start(FreePort.pick(), logDir);
  }

  public static PubSubEmulator start(int port, Path logDir) {
    List<String> args = List.of("-jar", CloudSdk.pubSubJar().toString(), "--host=127.0.0.1", "--port=" + port);
    return new PubSubEmulator(port, launch("Pub/Sub", args, port, logDir.resolve("pubsub-" + port + ".log")));
  }

  /** One emulator for the whole test JVM, logging under target/emulators; stopped when the JVM exits. */
  public static synchronized PubSubEmulator shared() {
    if (shared == null || !shared.isAlive()) {
      shared = start(sharedLogDir());
    }
    return shared;
  }
}
