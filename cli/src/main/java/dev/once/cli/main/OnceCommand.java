package dev.once.cli.main;

import com.google.api.gax.rpc.ApiException;
import com.google.cloud.firestore.FirestoreException;
import dev.once.cli.Context;
import dev.once.cli.Durations;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.inspect.InspectCommand;
import dev.once.cli.invalidate.InvalidateCommand;
import dev.once.cli.models.ModelsCommand;
import dev.once.cli.redrive.RedriveCommand;
import dev.once.cli.release.ReleaseCommand;
import dev.once.cli.stats.StatsCommand;
import dev.once.cli.stuck.StuckCommand;
import dev.once.cli.webhook.WebhookCommand;
import dev.once.ledger.LedgerUnavailable;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code once}: the operator's tool. One command per question an operator is asked: what happened to this key
 * ({@code inspect}), what is stuck ({@code stuck}), give this claim up ({@code release}), send this event again
 * ({@code redrive}), run this effect once more on purpose ({@code invalidate}), how are the effects doing
 * ({@code stats}), the Gemini webhook ({@code webhook}), and is the model served, at what price ({@code models}).
 */
@Command(name = "once", mixinStandardHelpOptions = true, version = "once 0.1.0",
    description = "The operator's tool for the once pipeline: inspect, stuck, release, redrive, invalidate, stats,"
        + " webhook, models.%n"
        + "Reads FIRESTORE_EMULATOR_HOST when set; else, with GOOGLE_CLOUD_PROJECT, the real Firestore with"
        + " application default credentials; else the emulator of the dev/run running here."
        + " ONCE_COLLECTION names the ledger (default idempotency).",
    subcommands = {InspectCommand.class, StuckCommand.class, ReleaseCommand.class, RedriveCommand.class,
        InvalidateCommand.class, StatsCommand.class, WebhookCommand.class, ModelsCommand.class},
    exitCodeListHeading = "%nExit codes (every command):%n",
    exitCodeList = {"0:done, or found", "1:nothing found or nothing done (each command says)",
        "2:Firestore cannot be read", "3:another service failed or refused", "64:usage error", "70:a bug"})
public final class OnceCommand implements Runnable, AutoCloseable {
  @Spec
  private CommandSpec spec;

  private final Context context;

  public OnceCommand(Context context) {
    this.context = context;
  }

  @Option(names = {"-y", "--yes"}, scope = CommandLine.ScopeType.INHERIT,
      description = "make the change without asking (it still names the project and the account first)")
  void yes(boolean value) {
    context.assumeYes(value);
  }

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(),
        "name a command: inspect, stuck, release, redrive, invalidate, stats, webhook, models");
  }

  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int code = execute(System.getenv(), in, out, err, args);
    out.flush();
    err.flush();
    System.exit(code);
  }

  /** Runs one command line; what it prints goes to {@code out} and {@code err}; no confirmation can be typed. */
  public static int execute(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
    return execute(env, null, out, err, args);
  }

  /** Runs one command line; a change's confirmation is read from {@code in} (null: none, only --yes confirms). */
  public static int execute(Map<String, String> env, BufferedReader in, PrintWriter out, PrintWriter err,
      String... args) {
    try (OnceCommand once = new OnceCommand(new Context(env, in, out, err))) {
      CommandLine line = new CommandLine(once, withContext(once.context))
          .setOut(out)
          .setErr(err)
          .registerConverter(Duration.class, new Durations())
          .setParameterExceptionHandler(OnceCommand::usage)
          .setExecutionExceptionHandler((e, cmd, parsed) -> failed(e, cmd, env));
      return line.execute(args);
    }
  }

  /**
   * Makes each command with the run's {@link Context} handed to its constructor, so that no command reaches up to
   * this root for it (the commands' packages import only {@code dev.once.cli}, never this one).
   */
  private static CommandLine.IFactory withContext(Context context) {
    CommandLine.IFactory defaults = CommandLine.defaultFactory();
    return new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> type) throws Exception {
        try {
          return type.getConstructor(Context.class).newInstance(context);
        } catch (NoSuchMethodException e) {
          return defaults.create(type);
        }
      }
    };
  }

  private static int usage(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage());
    cmd.getErr().println("see '" + cmd.getCommandSpec().qualifiedName() + " --help'");
    return Exit.USAGE;
  }

  /** One line per failure, never a stack trace (ONCE_DEBUG=1 adds it). */
  private static int failed(Exception e, CommandLine cmd, Map<String, String> env) {
    String name = cmd.getCommandSpec().qualifiedName();
    int code;
    String message;
    if (e instanceof Failure failure) {
      code = failure.code();
      message = failure.getMessage();
    } else if (e instanceof LedgerUnavailable || e instanceof FirestoreException || e instanceof ApiException) {
      // Pub/Sub, Monitoring and Gemini calls are wrapped as Failures where they are made: what is left is the ledger.
      code = Exit.FIRESTORE;
      message = "cannot read Firestore: " + Failure.reason(e);
    } else {
      code = Exit.BUG;
      message =
          "unexpected " + e.getClass().getName() + ": " + Failure.reason(e) + " (a bug; ONCE_DEBUG=1 shows where)";
    }
    cmd.getErr().println(name + ": " + message);
    if ("1".equals(env.get("ONCE_DEBUG"))) {
      e.printStackTrace(cmd.getErr());
    }
    return code;
  }

  @Override
  public void close() {
    context.close();
  }
}
