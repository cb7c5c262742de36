package dev.once.cli.stuck;

import com.google.cloud.Timestamp;
import dev.once.cli.Context;
import dev.once.cli.Durations;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.Fields;
import dev.once.cli.inspect.Values;
import dev.once.cli.stuck.PageToken.Cursor;
import dev.once.gemini.ModelUnavailable;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.PipelineSetting;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code once stuck}: what is not moving. Claims whose lease ran out (their holder failed or died and no delivery
 * took them over yet), claims retried many times, documents whose batch job has not completed after a while,
 * documents deferred by the spending guard, and batch mode's burst: documents queued far past the wait, gatherings
 * whose job was never made, jobs running far past Google's target. Each list says what to do. Paged: each list reads
 * at most {@code --limit} documents a page.
 */
@Command(name = "stuck", mixinStandardHelpOptions = true,
    description = {"What is not moving: ledger claims whose lease ran out (by Firestore's clock), claims with at least"
        + " --attempts attempts, documents submitted to a batch job longer than --older-than ago, documents deferred"
        + " by the spending guard (oldest first), and in batch mode documents queued longer than --queued-longer-than,"
        + " gatherings opened longer than that ago whose job was not made, and batch jobs running longer than"
        + " --jobs-longer-than. Each list says what to do. Each reads at most --limit documents a page; when one has"
        + " more, the last line gives the --page-token of the next page. Reads only."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:something is listed (or a further page may list something)", "1:nothing is stuck",
        "2:Firestore cannot be read", "64:usage error"})
public final class StuckCommand implements Callable<Integer> {
  static final String CLAIMS = "claims";
  static final String SUBMITTED = "submitted";
  static final String DEFERRED = "deferred";
  static final String QUEUED = "queued";
  static final String UNSUBMITTED = "unsubmitted";
  static final String RUNNING = "running";
  /** Beyond BATCH_MAX_WAIT_SECONDS: a due job is made at the next upload or reconciler run (every 10 minutes). */
  static final Duration QUEUE_MARGIN = Duration.ofMinutes(15);

  private final Context context;

  public StuckCommand(Context context) {
    this.context = context;
  }

  @Option(names = "--older-than", paramLabel = "SPAN", defaultValue = "1h",
      description = "a document still submitted after this long is listed (90s, 30m, 1h, 2d; default ${DEFAULT-VALUE})")
  private Duration olderThan;

  @Option(names = "--attempts", paramLabel = "N", defaultValue = "3",
      description = "a claim held by N or more deliveries is listed (default ${DEFAULT-VALUE})")
  private int attempts;

  @Option(names = "--queued-longer-than", paramLabel = "SPAN",
      description = "batch mode: a document queued, or a gathering opened, longer ago than this is listed (default:"
          + " BATCH_MAX_WAIT_SECONDS, from the environment or 300 s, plus 15m)")
  private Duration queuedLongerThan;

  @Option(names = "--jobs-longer-than", paramLabel = "SPAN", defaultValue = "24h",
      description = "batch mode: a batch job submitted longer ago than this and not completed is listed (default"
          + " ${DEFAULT-VALUE}, Google's target turnaround)")
  private Duration jobsLongerThan;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
      description = "documents read per list and page, 1-500 (default ${DEFAULT-VALUE})")
  private int limit;

  @Option(names = "--page-token", paramLabel = "TOKEN", description = "continue where the previous page stopped")
  private String pageToken;

  private PrintWriter out;
  private StuckQueries queries;
  private PageToken token;
  private final Map<String, Cursor> next = new LinkedHashMap<>();
  private int listed;

  @Override
  public Integer call() {
    if (limit < 1 || limit > 500) {
      throw Failure.usage("--limit must be 1-500, got " + limit);
    }
    if (attempts < 1) {
      throw Failure.usage("--attempts must be at least 1, got " + attempts);
    }
    token = pageToken == null ? PageToken.first() : PageToken.decode(pageToken);
    Duration maxWait = maxWait(context);
    Duration queuedFor = queuedLongerThan != null ? queuedLongerThan : maxWait.plus(QUEUE_MARGIN);
    Context.Target target = context.firestore();
    queries = new StuckQueries(target);
    out = context.out();

    out.println("stuck   (" + target.description() + ", collection " + target.collection() + ")");
    Instant now = claims(token.cutoffBase());
    if (now == null) {
      throw new IllegalStateException("a page token without its cut-off");
    }
    submitted(now.minus(olderThan));
    deferred();
    queued(now.minus(queuedFor), queuedFor, maxWait, context);
    unsubmitted(now.minus(queuedFor), queuedFor);
    running(now, now.minus(jobsLongerThan));

    PageToken following = token.with(now, next);
    if (!following.exhausted()) {
      out.println("more: once stuck --older-than " + Durations.format(olderThan) + " --attempts " + attempts
          + " --queued-longer-than " + Durations.format(queuedFor) + " --jobs-longer-than "
          + Durations.format(jobsLongerThan) + " --limit " + limit + " --page-token " + following.encode());
      return Exit.OK;
    }
    if (listed == 0) {
      out.println("nothing is stuck");
      return Exit.NOTHING;
    }
    return Exit.OK;
  }

  /** True, and the list's cursor recorded as exhausted, when an earlier page finished the list. */
  private boolean done(String list) {
    Cursor at = token.cursor(list);
    if (at != null && at.end()) {
      next.put(list, Cursor.END);
      return true;
    }
    return false;
  }

  /** Returns the cut-off base: the token's, else this page's read time (Firestore's clock). */
  private Instant claims(Instant base) {
    if (done(CLAIMS)) {
      return base;
    }
    StuckQueries.Claims claims = queries.claims(token.cursor(CLAIMS), limit, attempts);
    next.put(CLAIMS, claims.next());
    listed += claims.expired().size() + claims.retried().size();
    out.println("claims whose lease ran out: " + count(claims.expired()) + " (a redelivery takes them over;"
        + " if none will come, once redrive the event)");
    claims.expired().forEach(r -> out.println(claimLine(r)));
    out.println("claims with " + attempts + " or more attempts: " + count(claims.retried()));
    claims.retried().forEach(r -> out.println(claimLine(r)));
    long waiting = Stream.concat(claims.expired().stream(), claims.retried().stream())
        .filter(r -> ModelUnavailable.says(r.error())).map(LedgerRecord::recordId).distinct().count();
    if (waiting > 0) {
      out.println("  " + waiting + " of these wait for a model Google does not serve (their last error: Gemini answered"
          + " 404): set GEMINI_MODEL to a model Google serves (once models) and redeploy; each is then analysed once");
    }
    return base == null ? claims.readTime() : base;
  }

  private void submitted(Instant cutoff) {
    if (done(SUBMITTED)) {
      return;
    }
    StuckQueries.Documents submitted = queries.submittedBefore(cutoff, token.cursor(SUBMITTED), limit);
    next.put(SUBMITTED, submitted.next());
    listed += submitted.documents().size();
    out.println("documents submitted before " + cutoff + " (" + Durations.format(olderThan) + " ago) whose batch job"
        + " has not completed: " + count(submitted.documents()));
    submitted.documents()
        .forEach(d -> out.println("  " + d.getString(Fields.KEY) + "  job " + Values.text(d.get(Fields.JOB))
            + ", submitted " + time(d.getTimestamp(Fields.UPDATED_AT)) + keyHash(d.getString(Fields.KEY))));
  }

  private void deferred() {
    if (done(DEFERRED)) {
      return;
    }
    StuckQueries.Documents deferred = queries.deferred(token.cursor(DEFERRED), limit);
    next.put(DEFERRED, deferred.next());
    listed += deferred.documents().size();
    out.println("documents deferred by the spending guard, oldest first: " + count(deferred.documents()));
    deferred.documents().forEach(d -> out.println("  " + d.getString(Fields.KEY) + "  deferred "
        + time(d.getTimestamp(Fields.DEFERRED_AT))
        + (d.get("reason") == null ? "" : ": " + Values.text(d.get("reason")))
        + keyHash(d.getString(Fields.KEY))));
  }

  /** Queued past the wait: the cap on jobs in flight is full, or the reconciler does not submit. */
  private void queued(Instant cutoff, Duration queuedFor, Duration maxWait, Context context) {
    if (done(QUEUED)) {
      return;
    }
    StuckQueries.Documents queued = queries.queuedBefore(cutoff, token.cursor(QUEUED), limit);
    next.put(QUEUED, queued.next());
    listed += queued.documents().size();
    String header = "documents queued longer than " + Durations.format(queuedFor) + " (BATCH_MAX_WAIT_SECONDS "
        + maxWait.toSeconds() + " s and more), oldest first: " + count(queued.documents());
    if (!queued.documents().isEmpty()) {
      long inFlight = queries.jobsInFlight();
      long cap = maxJobsInFlight(context);
      header += inFlight >= cap
          ? " (batch jobs in flight: " + inFlight + " of " + cap + ", the cap: they wait for a job to complete and"
              + " free a place; see the jobs running long below)"
          : " (batch jobs in flight: " + inFlight + " of " + cap + ", below the cap: the reconciler should have"
              + " submitted them; is it running, and does Gemini refuse batches.create? its 'reconciliation run' lines"
              + " and Cloud Scheduler's job say)";
    }
    out.println(header);
    queued.documents().forEach(d -> out.println("  " + d.getString(Fields.KEY) + "  queued "
        + time(d.getTimestamp(Fields.QUEUED_AT)) + ago(d.getTimestamp(Fields.QUEUED_AT), cutoff.plus(queuedFor))
        + keyHash(d.getString(Fields.KEY))));
  }

  /** Gatherings whose job was not made: their submission was interrupted, or Gemini keeps refusing it. */
  private void unsubmitted(Instant cutoff, Duration queuedFor) {
    if (done(UNSUBMITTED)) {
      return;
    }
    StuckQueries.GatheringPage page = queries.gatherings(Gatherings.OPEN, token.cursor(UNSUBMITTED), limit);
    next.put(UNSUBMITTED, page.next());
    List<StuckQueries.Gathering> old = page.gatherings().stream()
        .filter(g -> g.openedAt() != null && g.openedAt().isBefore(cutoff)).toList();
    listed += old.size();
    out.println("gatherings opened longer than " + Durations.format(queuedFor) + " ago whose batch job was not made: "
        + count(old) + (old.isEmpty() ? "" : " (the reconciler submits them again every run, adopting a job an earlier"
            + " try made; if they stay, its log says why Gemini refuses batches.create: 429 quota, 5xx)"));
    for (StuckQueries.Gathering g : old) {
      out.println("  gathering " + g.id() + "  opened " + g.openedAt() + ", " + (g.sealedAt() == null
          ? "not sealed" : "sealed " + g.sealedAt()) + ", " + queries.gatheredInto(g.id()) + " documents");
    }
  }

  /** Jobs running past the threshold: Gemini's to end; they hold a place among the jobs in flight meanwhile. */
  private void running(Instant now, Instant cutoff) {
    if (done(RUNNING)) {
      return;
    }
    StuckQueries.GatheringPage page = queries.gatherings(Gatherings.SUBMITTED, token.cursor(RUNNING), limit);
    next.put(RUNNING, page.next());
    List<StuckQueries.Gathering> old = page.gatherings().stream()
        .filter(g -> g.submittedAt() != null && g.submittedAt().isBefore(cutoff)).toList();
    listed += old.size();
    out.println("batch jobs running longer than " + Durations.format(jobsLongerThan) + ": " + count(old)
        + (old.isEmpty() ? "" : " (Google aims at 24 h and expires a job after 48 h; the webhook or the reconciler"
            + " completes each when Gemini ends it; meanwhile it holds a place among the jobs in flight. once inspect"
            + " gemini:batches/ID lists its documents)"));
    for (StuckQueries.Gathering g : old) {
      out.println("  " + g.job() + "  gathering " + g.id() + ", " + (g.documents() == null ? "?" : g.documents())
          + " documents, submitted " + g.submittedAt() + " (" + Durations.span(Duration.between(g.submittedAt(), now))
          + " ago)");
    }
  }

  /** BATCH_MAX_WAIT_SECONDS as the functions are deployed with it, if the tool is told, else the default. */
  private static Duration maxWait(Context context) {
    String seconds = context.env(PipelineSetting.BATCH_MAX_WAIT_SECONDS.name())
        .orElse(PipelineSetting.BATCH_MAX_WAIT_SECONDS.defaultValue());
    try {
      return Duration.ofSeconds(Long.parseLong(seconds));
    } catch (NumberFormatException e) {
      throw Failure.usage("BATCH_MAX_WAIT_SECONDS must be a whole number of seconds, got \"" + seconds + "\"");
    }
  }

  private static long maxJobsInFlight(Context context) {
    String cap = context.env(PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT.name())
        .orElse(PipelineSetting.BATCH_MAX_JOBS_IN_FLIGHT.defaultValue());
    try {
      return Long.parseLong(cap);
    } catch (NumberFormatException e) {
      throw Failure.usage("BATCH_MAX_JOBS_IN_FLIGHT must be a whole number, got \"" + cap + "\"");
    }
  }

  private static String count(List<?> items) {
    return items.isEmpty() ? "none" : String.valueOf(items.size());
  }

  private static String claimLine(LedgerRecord r) {
    StringBuilder line = new StringBuilder(String.format("  %-11s %s  attempts %d, token %d, lease %s %s",
        r.effect(), r.key(), r.attempts(), r.token(), r.leaseLive() ? "live until" : "expired at",
        Values.instant(r.leaseExpiresAt())));
    if (r.released() != null) {
      line.append(", released by ").append(r.released().by());
    }
    if (r.awaitingRerun()) {
      LedgerRecord.Invalidated last = r.history().get(r.history().size() - 1);
      line.append(", run ").append(r.generation()).append(" to come: invalidated by ").append(last.by())
          .append(": ").append(Values.text(last.reason()));
    }
    if (r.error() != null) {
      line.append(", last error: ").append(Values.text(r.error()));
    }
    return line.append(keyHash(r.key())).toString();
  }

  /** The hash log lines show instead of the key (EventLog), so that a line and a stuck claim can be matched. */
  private static String keyHash(String key) {
    return key == null ? "" : "  [keyHash " + IdempotencyKey.logHash(key) + "]";
  }

  private static String time(Timestamp t) {
    return t == null ? "—" : Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
  }

  private static String ago(Timestamp t, Instant now) {
    return t == null ? "" : " (" + Durations.span(Duration.between(Instant.ofEpochSecond(t.getSeconds(), t.getNanos()),
        now)) + " ago)";
  }
}
