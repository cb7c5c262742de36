package dev.once.cli.stuck;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.cli.Context;
import dev.once.cli.Durations;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.Fields;
import dev.once.cli.Once;
import dev.once.cli.inspect.Values;
import dev.once.cli.stuck.PageToken.Cursor;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code once stuck}: what is not moving. Claims whose lease ran out (their holder failed or died and no delivery
 * took them over yet), claims retried many times, documents whose batch job has not completed after a while, and
 * documents deferred by the spending guard. Paged: each list reads at most {@code --limit} documents a page.
 */
@Command(name = "stuck", mixinStandardHelpOptions = true,
    description = {"What is not moving: ledger claims whose lease ran out (by Firestore's clock), claims with at least"
        + " --attempts attempts, documents submitted to a batch job longer than --older-than ago, and documents deferred"
        + " by the spending guard (oldest first). Each list reads at most --limit documents a page; when one has more,"
        + " the last line gives the --page-token of the next page. Reads only."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:something is listed (or a further page may list something)", "1:nothing is stuck",
        "2:Firestore cannot be read", "64:usage error"})
public final class StuckCommand implements Callable<Integer> {
  static final String CLAIMS = "claims";
  static final String SUBMITTED = "submitted";
  static final String DEFERRED = "deferred";

  @ParentCommand
  private Once once;

  @Option(names = "--older-than", paramLabel = "SPAN", defaultValue = "1h",
      description = "a document still submitted after this long is listed (90s, 30m, 1h, 2d; default ${DEFAULT-VALUE})")
  private Duration olderThan;

  @Option(names = "--attempts", paramLabel = "N", defaultValue = "3",
      description = "a claim held by N or more deliveries is listed (default ${DEFAULT-VALUE})")
  private int attempts;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
      description = "documents read per list and page, 1-500 (default ${DEFAULT-VALUE})")
  private int limit;

  @Option(names = "--page-token", paramLabel = "TOKEN", description = "continue where the previous page stopped")
  private String pageToken;

  @Override
  public Integer call() {
    if (limit < 1 || limit > 500) {
      throw Failure.usage("--limit must be 1-500, got " + limit);
    }
    if (attempts < 1) {
      throw Failure.usage("--attempts must be at least 1, got " + attempts);
    }
    PageToken token = pageToken == null ? PageToken.first() : PageToken.decode(pageToken);
    Context context = once.context();
    Context.Target target = context.firestore();
    StuckQueries queries = new StuckQueries(target);
    PrintWriter out = context.out();
    Map<String, Cursor> next = new LinkedHashMap<>();
    int listed = 0;

    Instant now = token.cutoffBase();
    out.println("stuck   (" + target.description() + ", collection " + target.collection() + ")");
    Cursor claimsAt = token.cursor(CLAIMS);
    if (claimsAt == null || !claimsAt.end()) {
      StuckQueries.Claims claims = queries.claims(claimsAt, limit, attempts);
      now = now == null ? claims.readTime() : now;
      next.put(CLAIMS, claims.next());
      listed += claims.expired().size() + claims.retried().size();
      out.println("claims whose lease ran out: " + count(claims.expired()) + " (a redelivery takes them over;"
          + " if none will come, once redrive the event)");
      claims.expired().forEach(r -> out.println(claimLine(r)));
      out.println("claims with " + attempts + " or more attempts: " + count(claims.retried()));
      claims.retried().forEach(r -> out.println(claimLine(r)));
    } else {
      next.put(CLAIMS, Cursor.END);
    }
    if (now == null) {
      throw new IllegalStateException("a page token without its cut-off");
    }
    Instant cutoff = now.minus(olderThan);
    Cursor submittedAt = token.cursor(SUBMITTED);
    if (submittedAt == null || !submittedAt.end()) {
      StuckQueries.Documents submitted = queries.submittedBefore(cutoff, submittedAt, limit);
      next.put(SUBMITTED, submitted.next());
      listed += submitted.documents().size();
      out.println("documents submitted before " + cutoff + " (" + Durations.format(olderThan) + " ago) whose batch job"
          + " has not completed: " + count(submitted.documents()));
      submitted.documents().forEach(d -> out.println("  " + d.getString("key") + "  job " + Values.text(d.get("job"))
          + ", submitted " + time(d.getTimestamp(Fields.UPDATED_AT)) + keyHash(d.getString("key"))));
    } else {
      next.put(SUBMITTED, Cursor.END);
    }
    Cursor deferredAt = token.cursor(DEFERRED);
    if (deferredAt == null || !deferredAt.end()) {
      StuckQueries.Documents deferred = queries.deferred(deferredAt, limit);
      next.put(DEFERRED, deferred.next());
      listed += deferred.documents().size();
      out.println("documents deferred by the spending guard, oldest first: " + count(deferred.documents()));
      deferred.documents().forEach(d -> out.println("  " + d.getString("key") + "  deferred "
          + time(d.getTimestamp(Fields.DEFERRED_AT)) + (d.get("reason") == null ? "" : ": " + Values.text(d.get("reason")))
          + keyHash(d.getString("key"))));
    } else {
      next.put(DEFERRED, Cursor.END);
    }
    PageToken following = token.with(now, next);
    if (!following.exhausted()) {
      out.println("more: once stuck --older-than " + Durations.format(olderThan) + " --attempts " + attempts
          + " --limit " + limit + " --page-token " + following.encode());
      return Exit.OK;
    }
    if (listed == 0) {
      out.println("nothing is stuck");
      return Exit.NOTHING;
    }
    return Exit.OK;
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
}
