package dev.once.cli;

import com.google.cloud.firestore.Firestore;
import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.firestore.FirestoreClients;
import dev.once.firestore.FirestoreLedger;
import dev.once.ledger.LedgerOptions;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.run.RunConfig;
import dev.once.run.RunLock;
import dev.once.run.StackInfo;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * What every command works with: the environment, the output streams, the {@code dev/run} running here (its lock
 * file says where everything listens) and the Firestore to read, connected on first use and closed at the end.
 *
 * <p>Which Firestore: {@code FIRESTORE_EMULATOR_HOST} when set (project {@code GOOGLE_CLOUD_PROJECT}, default
 * once-local); else, with {@code GOOGLE_CLOUD_PROJECT}, the real Firestore of that project with application default
 * credentials; else the emulator of the dev/run running here. {@code ONCE_COLLECTION} names the ledger.
 */
public final class Context implements AutoCloseable {
  /** Where dev/run's lock is looked for; dev/once runs from the repository root. */
  static final String RUN_DIR = "ONCE_RUN_DIR";

  private final Map<String, String> env;
  private final Settings settings;
  private final PrintWriter out;
  private final PrintWriter err;
  private final BufferedReader in;
  private boolean assumeYes;
  private Optional<StackInfo> stack;
  private Target target;

  public Context(Map<String, String> env, PrintWriter out, PrintWriter err) {
    this(env, null, out, err);
  }

  /** @param in where a change's confirmation is read from (standard input); null: none, so only --yes confirms */
  public Context(Map<String, String> env, BufferedReader in, PrintWriter out, PrintWriter err) {
    this.env = Map.copyOf(env);
    this.settings = Settings.of(this.env);
    this.in = in;
    this.out = out;
    this.err = err;
  }

  /** Where a change's confirmation is read from; null when there is none. */
  public BufferedReader in() {
    return in;
  }

  /** {@code --yes}: changes go ahead without asking (each still names what, where and who first). */
  public boolean assumeYes() {
    return assumeYes;
  }

  public void assumeYes(boolean value) {
    assumeYes = value;
  }

  /** Where to read: the client, a description for headers and messages, the ledger's collection. */
  public record Target(Firestore db, String description, String project, String collection, boolean emulator) {
    public FirestoreLedger ledger() {
      return new FirestoreLedger(db, LedgerOptions.defaults().withCollection(collection));
    }
  }

  public PrintWriter out() {
    return out;
  }

  public PrintWriter err() {
    return err;
  }

  public Settings settings() {
    return settings;
  }

  public Optional<String> env(String name) {
    return Optional.ofNullable(env.get(name)).map(String::strip).filter(v -> !v.isEmpty());
  }

  /** The dev/run running here, if any (its lock names a live pid). */
  public Optional<StackInfo> stack() {
    if (stack == null) {
      Path dir = env(RUN_DIR).map(Path::of).orElse(RunConfig.DEFAULT_LOG_DIR);
      stack = StackInfo.read(RunLock.file(dir)).filter(StackInfo::alive);
    }
    return stack;
  }

  /** The ports of the local stack: the running dev/run's, else the defaults moved by ONCE_*_PORT. */
  public Ports localPorts() {
    return stack().map(StackInfo::portSet).orElseGet(() -> Ports.fromEnvironment(env));
  }

  /** True when the commands talk to a deployed project rather than emulators and stand-ins. */
  public boolean deployed() {
    return settings.optional(OnceSetting.FIRESTORE_EMULATOR_HOST).isEmpty()
        && settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT).isPresent();
  }

  /** The project: GOOGLE_CLOUD_PROJECT, else the local stack's. */
  public String project() {
    return settings.optional(OnceSetting.GOOGLE_CLOUD_PROJECT)
        .orElseGet(() -> stack().map(StackInfo::project).orElse(RunConfig.PROJECT));
  }

  /** Firestore, connected on first use; a {@link Failure} with exit 2 when it cannot be reached. */
  public Target firestore() {
    if (target == null) {
      target = connect();
    }
    return target;
  }

  private Target connect() {
    String emulator = settings.optional(OnceSetting.FIRESTORE_EMULATOR_HOST).orElse(null);
    String collection = env(OnceSetting.ONCE_COLLECTION.name()).orElse(null);
    if (deployed()) {
      String project = project();
      try {
        return new Target(FirestoreClients.create(settings), "Firestore of project " + project, project,
            settings.required(OnceSetting.ONCE_COLLECTION), false);
      } catch (RuntimeException e) {
        throw Failure.firestore("cannot connect to the Firestore of project " + project + ": " + Failure.reason(e), e);
      }
    }
    String project = project();
    if (emulator == null) {
      emulator = localPorts().hostPort(Part.FIRESTORE);
      if (collection == null) {
        collection = stack().map(StackInfo::collection).orElse(null);
      }
    }
    if (!listening(emulator)) {
      throw Failure.firestore("no Firestore emulator answers on " + emulator + " (is dev/run running? or set"
          + " FIRESTORE_EMULATOR_HOST, or GOOGLE_CLOUD_PROJECT for the real Firestore)", null);
    }
    return new Target(FirestoreClients.forEmulator(project, emulator),
        "Firestore emulator " + emulator + ", project " + project, project,
        collection == null || collection.isBlank() ? OnceSetting.ONCE_COLLECTION.defaultValue() : collection, true);
  }

  private static boolean listening(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
          2000);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  @Override
  public void close() {
    if (target != null) {
      try {
        target.db().close();
      } catch (Exception e) {
        // the command's answer is out already; a client that fails to close changes nothing
      }
    }
  }
}
