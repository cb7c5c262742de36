package dev.once.cli.stats;

import com.google.cloud.monitoring.v3.MetricServiceClient;
import dev.once.cli.Context;
import dev.once.cli.Durations;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.run.StackInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code once stats [--since 1h]}: per effect, processed, duplicates, rejected, failed, deferred and the duplicate
 * rate. Against a deployed project from the log-based metric (Cloud Monitoring); locally from the ledger, or with
 * {@code --from logs} from the dev/run's function logs, which are what the metric counts. Whatever the source, then
 * batch mode now, from Firestore ({@link BatchSection}).
 */
@Command(name = "stats", mixinStandardHelpOptions = true,
    description = {"Per effect: processed, duplicates, rejected, failed, deferred, and the duplicate rate (duplicates"
        + " among all of the effect's outcomes). Then batch mode as Firestore has it now: documents queued (the oldest"
        + " wait) and gathered, batch jobs in flight by state against BATCH_MAX_JOBS_IN_FLIGHT (read from the"
        + " environment when set, else the default), jobs done.",
        "--from logs: the functions' log lines, as the log-based metric counts them; against a deployed project read"
            + " from Cloud Monitoring (roles/monitoring.viewer), locally from the dev/run's log files (since it"
            + " started: the lines carry no time).",
        "--from ledger: the ledger's records written in the window (a duplicate writes nothing, so none are"
            + " counted; reads every record, up to --max-records). Default: logs against a deployed project, ledger"
            + " locally."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:counted", "1:nothing happened in the window", "2:Firestore cannot be read",
        "3:Cloud Monitoring or the log files cannot be read", "64:usage error"})
public final class StatsCommand implements Callable<Integer> {
  enum Source { ledger, logs }

  private final Context context;

  public StatsCommand(Context context) {
    this.context = context;
  }

  @Option(names = "--since", paramLabel = "SPAN", defaultValue = "1h",
      description = "the window, ending now (90s, 30m, 1h, 2d; default ${DEFAULT-VALUE})")
  private Duration since;

  @Option(names = "--from", paramLabel = "SOURCE",
      description = "ledger or logs (default: logs when deployed, else ledger)")
  private Source from;

  @Option(names = "--metric-prefix", paramLabel = "PREFIX", defaultValue = "once",
      description = "Terraform's name_prefix: the metric is PREFIX_outcomes (default ${DEFAULT-VALUE})")
  private String metricPrefix;

  @Option(names = "--max-records", paramLabel = "N", defaultValue = "20000",
      description = "ledger records read at most, --from ledger (default ${DEFAULT-VALUE})")
  private long maxRecords;

  @Override
  public Integer call() {
    PrintWriter out = context.out();
    Source source = from != null ? from : context.deployed() ? Source.logs : Source.ledger;
    if (maxRecords < 1) {
      throw Failure.usage("--max-records must be positive");
    }
    Counts counts;
    if (source == Source.ledger) {
      Context.Target target = context.firestore();
      LedgerCounts.Result result = LedgerCounts.count(target, since, maxRecords);
      out.println("stats since " + result.cutoff() + " (" + Durations.format(since) + ", Firestore's time) from the"
          + " ledger   (" + target.description() + ", collection " + target.collection() + ")");
      if (result.truncated()) {
        out.println("  partial: read the first " + result.scanned() + " records only (--max-records); --from logs"
            + " counts everything");
      }
      counts = result.counts();
      print(out, counts);
      BatchSection.print(context, out);
      out.println("  duplicates write nothing to the ledger: --from logs counts them");
    } else if (context.deployed()) {
      if (since.compareTo(MonitoringCounts.SHORTEST) < 0) {
        throw Failure.usage("--since must be at least 1m against Cloud Monitoring (its shortest alignment period)");
      }
      String project = context.project();
      Instant end = Instant.now();
      try (MetricServiceClient client = MonitoringCounts.client()) {
        counts = MonitoringCounts.count(client, MonitoringCounts.request(project, metricPrefix, end, since));
      }
      out.println("stats of the last " + Durations.format(since) + " from " + MonitoringCounts.metricType(metricPrefix)
          + " (Cloud Monitoring, project " + project + ")");
      print(out, counts);
      batchUnlessUnreadable(context, out);
    } else {
      StackInfo stack = context.stack().orElseThrow(() -> Failure.usage("--from logs locally reads the log files of"
          + " the dev/run running here, and none is running (or set GOOGLE_CLOUD_PROJECT for a deployed project)"));
      counts = LogCounts.count(stack.logs());
      out.println("stats since dev/run started at " + stack.startedAt() + " from the functions' log lines in "
          + stack.logDir() + " (--since does not apply: the lines carry no time)");
      print(out, counts);
      batchUnlessUnreadable(context, out);
    }
    return counts.isEmpty() ? Exit.NOTHING : Exit.OK;
  }

  /** With the counts from the logs, batch mode as Firestore has it; a Firestore the tool cannot read costs them nothing. */
  private static void batchUnlessUnreadable(Context context, PrintWriter out) {
    try {
      BatchSection.print(context, out);
    } catch (Failure e) {
      if (e.code() != Exit.FIRESTORE) {
        throw e;
      }
      out.println("  batch mode: not shown, " + e.getMessage() + " (the batch section reads Firestore:"
          + " roles/datastore.viewer)");
    }
  }

  private static void print(PrintWriter out, Counts counts) {
    if (counts.isEmpty()) {
      out.println("  nothing happened in this window");
    } else {
      counts.print(out);
    }
  }
}
