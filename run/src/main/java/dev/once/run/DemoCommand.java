package dev.once.run;

import dev.once.config.OnceSetting;
import dev.once.config.Settings;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.run.demo.Demo;
import dev.once.run.demo.DemoReport;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code dev/demo}: the demo against a {@code dev/run} that is already running, found through its lock file
 * ({@code target/run/run.lock}: ports, mode, logs), or else on the ports the defaults and {@code ONCE_…_PORT} give.
 * Exits 1 when an effect ran twice or an event was lost.
 */
public final class DemoCommand {
  private static final String USAGE = """
      usage: dev/demo [--log-dir DIR] [--mode sync|batch]
        Runs the demo against the dev/run already running here (its lock file in DIR, default target/run, says
        where everything listens and in which mode); without one, against the default ports (ONCE_<PART>_PORT)
        in the given mode. Exit 1 when an effect ran twice or an event was lost.""";

  private DemoCommand() {}

  public static void main(String[] args) {
    System.exit(run(args, System.getenv(), System.out, System.err));
  }

  static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    Cli cli;
    try {
      cli = Cli.parse(args, Set.of("log-dir", "mode", "help"));
    } catch (IllegalArgumentException e) {
      err.println("dev/demo: " + e.getMessage());
      err.println(USAGE);
      return LocalPipeline.USAGE;
    }
    if (cli.has("help")) {
      out.println(USAGE);
      return LocalPipeline.OK;
    }
    Path logDir = Path.of(cli.get("log-dir", RunConfig.DEFAULT_LOG_DIR.toString()));
    Optional<StackInfo> found = StackInfo.read(RunLock.file(logDir)).filter(StackInfo::alive);
    StackInfo stack;
    if (found.isPresent()) {
      stack = found.get();
    } else {
      Ports ports;
      try {
        ports = Ports.fromEnvironment(env);
      } catch (IllegalArgumentException e) {
        err.println("dev/demo: " + e.getMessage());
        return LocalPipeline.USAGE;
      }
      if (!answers(ports.url(Part.RELAY) + "/_admin/counters")
          || !answers(ports.url(Part.GEMINI) + "/_admin/counters")) {
        err.println(
            "dev/demo: no dev/run is running here (no live " + RunLock.file(logDir) + ", and nothing answers on "
                + ports.url(Part.RELAY) + "); start dev/run in another terminal first, or run dev/run --demo");
        return LocalPipeline.FAILED;
      }
      RunConfig assumed = new RunConfig(Mode.parse(cli.get("mode", "sync")), ports, logDir, RunConfig.PROJECT, null,
          null, false, Settings.of(env).required(OnceSetting.ONCE_COLLECTION));
      stack = StackInfo.of(assumed, -1, List.of());
    }
    DateTimeFormatter time = DateTimeFormatter.ofPattern("HH:mm:ss");
    try {
      DemoReport report = Demo.run(stack, line -> out.println(LocalTime.now().format(time) + "  " + line));
      out.println();
      report.render().forEach(out::println);
      return report.ok() ? LocalPipeline.OK : LocalPipeline.FAILED;
    } catch (RuntimeException e) {
      err.println("dev/demo: " + e.getMessage());
      return LocalPipeline.FAILED;
    }
  }

  private static boolean answers(String url) {
    try {
      HttpResponse<Void> response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()
          .send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(),
              HttpResponse.BodyHandlers.discarding());
      return response.statusCode() == 200;
    } catch (Exception e) {
      return false;
    }
  }
}
