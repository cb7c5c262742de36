package dev.once.cli.inspect;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code once inspect KEY}: what the ledger knows about one key — every effect's state, attempts, fencing token,
 * lease, last error, outcome and an operator's release — and the analysis and billing entries, ending with a verdict
 * for the operator asked "was this invoice billed twice?". Reads Firestore only; writes nothing.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
    description = {"What the ledger knows about one key: each effect's state, attempts, token, lease (by Firestore's"
        + " clock), outcome, last error and an operator's release; the analysis; every billing entry found by its key"
        + " field; a verdict (billed once, not billed, billed N times). Reads only."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:the key is known", "1:nothing is known about it", "2:Firestore cannot be read",
        "64:usage error"})
public final class InspectCommand implements Callable<Integer> {
  private final Context context;

  public InspectCommand(Context context) {
    this.context = context;
  }

  @Parameters(paramLabel = "KEY", description = "gcs:BUCKET/NAME#GENERATION (or gs://…), pubsub:MESSAGE_ID or a"
      + " producer's idempotency_key, gemini:batches/ID or a Gemini batch job in any spelling (batches/ID, a bare"
      + " id, an API URL), or a log line's keyHash (16 hex digits: log lines name keys by hash only)")
  private String key;

  @Override
  public Integer call() {
    Context.Target target = context.firestore();
    return new Report(target, context.out()).print(key);
  }

  /** The printed report for one typed key. */
  private static final class Report {
    private final KeyRecords read;
    private final String collection;
    private final String where;
    private final PrintWriter out;

    Report(Context.Target target, PrintWriter out) {
      this.read = new KeyRecords(target);
      this.collection = target.collection();
      this.where = target.description();
      this.out = out;
    }

    int print(String typed) {
      List<IdempotencyKey> candidates = new ArrayList<>();
      if (KeyCandidates.isLogHash(typed)) {
        candidates.addAll(read.byLogHash(typed.strip().substring(0, IdempotencyKey.LOG_HASH_CHARS)));
      }
      candidates.addAll(KeyCandidates.of(typed));
      boolean known = false;
      for (IdempotencyKey key : candidates) {
        Map<String, LedgerRecord> records = read.ledger(key);
        Optional<DocumentSnapshot> analysis = read.analysis(key);
        List<QueryDocumentSnapshot> bills = read.billing(key);
        List<QueryDocumentSnapshot> jobDocuments = key.value().startsWith(GeminiCompletionKeys.PREFIX)
            ? read.jobDocuments(GeminiCompletionKeys.jobName(key)) : List.of();
        if (records.isEmpty() && analysis.isEmpty() && bills.isEmpty() && jobDocuments.isEmpty()) {
          continue;
        }
        if (known) {
          out.println();
        }
        known = true;
        out.println("key " + key + "   (keyHash " + key.logHash() + " in log lines; " + where + ", collection "
            + collection + ")");
        printLedger(records, Effects.ALL);
        if (!jobDocuments.isEmpty()) {
          printJob(jobDocuments);
          continue;
        }
        analysis.ifPresent(this::printAnalysis);
        printBilling(bills);
        String job = analysis.map(a -> a.getString("job")).orElse(null);
        if (job != null) {
          IdempotencyKey jobKey = GeminiCompletionKeys.ofName(job);
          out.println("batch job " + jobKey + " (once inspect " + job + " for its ledger)");
          printLedger(read.ledger(jobKey), List.of(Effects.COMPLETE, Effects.PUBLISH));
        }
        out.println("verdict: " + verdict(bills, Optional.ofNullable(records.get(Effects.ANALYSE))
            .map(LedgerRecord::generation).orElse(1)) + Optional.ofNullable(records.get(Effects.ANALYSE))
                .map(analyse -> geminiCalls(analyse)).orElse(""));
      }
      if (!known) {
        out.println("nothing is known about " + typed.strip() + " (" + where + ", collection " + collection + ")"
            + (candidates.size() > 1 ? "; looked for " + candidates : "")
            + (KeyCandidates.isLogHash(typed) ? "; a keyHash is found through the analysis of its document, which"
                + " records_retention_days may have expired, or is a job's or a message's (its log line names it)"
                : ""));
        return Exit.NOTHING;
      }
      return Exit.OK;
    }

    private void printLedger(Map<String, LedgerRecord> records, List<String> effects) {
      out.println("ledger");
      for (String effect : effects) {
        LedgerRecord record = records.get(effect);
        if (record == null) {
          out.println(String.format("  %-13s —", effect));
          continue;
        }
        out.println(String.format("  %-13s %-9s attempts %d, token %d, created %s, updated %s%s", effect,
            record.state(), record.attempts(), record.token(), Values.instant(record.createdAt()),
            Values.instant(record.updatedAt()), record.generation() > 1 ? ", run " + record.generation() : ""));
        for (LedgerRecord.Invalidated run : record.history()) {
          out.println(String.format("  %-13s run %d %s after %d %s%s, invalidated by %s at %s: %s", "",
              run.generation(), run.state(), run.attempts(), run.attempts() == 1 ? "attempt" : "attempts",
              run.finishedAt() == null ? "" : " at " + Values.instant(run.finishedAt()), run.by(),
              Values.instant(run.at()), Values.text(run.reason())));
          if (!run.outcome().isEmpty()) {
            out.println(String.format("  %-13s   its outcome %s", "", Values.text(run.outcome())));
          }
          if (run.error() != null) {
            out.println(
                String.format("  %-13s   %s %s", "", run.state() == RecordState.REJECTED ? "refused:" : "error:",
                    Values.text(run.error())));
          }
        }
        if (record.awaitingRerun()) {
          out.println(String.format("  %-13s run %d waits for the next delivery (once invalidate)", "",
              record.generation()));
        }
        if (record.state() == RecordState.CLAIMED) {
          out.println(String.format("  %-13s lease %s", "", record.leaseLive()
              ? "live until " + record.leaseExpiresAt() + " (a delivery is working on it; others wait)"
              : "expired at " + Values.instant(record.leaseExpiresAt()) + " (the next delivery takes it over)"));
        }
        for (Call call : record.calls()) {
          out.println(String.format("  %-13s try %d at %s: %s%s", "", call.number(), Values.instant(call.at()),
              call.outcome().stored().replace('_', ' '),
              call.error() == null ? "" : " (" + Values.text(call.error()) + ")"));
        }
        if (record.released() != null) {
          LedgerRecord.Released released = record.released();
          out.println(String.format("  %-13s released by %s at %s: %s", "", released.by(),
              Values.instant(released.at()), Values.text(released.reason())));
        }
        if (!record.outcome().isEmpty()) {
          out.println(String.format("  %-13s outcome %s", "", Values.text(record.outcome())));
        }
        if (record.error() != null) {
          out.println(
              String.format("  %-13s %s %s", "", record.state() == RecordState.REJECTED ? "refused:" : "last error:",
                  Values.text(record.error())));
        }
      }
    }

    private void printAnalysis(DocumentSnapshot analysis) {
      out.println("analysis  " + RecordWrites.ANALYSES + "/" + analysis.getId());
      out.println("  status " + Values.text(analysis.get("status")) + ", mode " + Values.text(analysis.get("mode"))
          + ", model " + Values.text(analysis.get("model")) + asked(analysis) + ", job "
          + Values.text(analysis.get("job"))
          + ", updated " + Values.text(analysis.get("updatedAt")));
      if (analysis.get("reason") != null) {
        out.println("  reason " + Values.text(analysis.get("reason")));
      }
      if (analysis.get("invoice") != null) {
        out.println("  invoice " + Values.text(analysis.get("invoice")));
      }
    }

    /** " (asked for M: Google answered with another)" for a rerouted answer, else nothing. */
    private static String asked(DocumentSnapshot record) {
      return record.get("requestedModel") == null ? ""
          : " (asked for " + Values.text(record.get("requestedModel")) + ": Google answered with another)";
    }

    private void printBilling(List<QueryDocumentSnapshot> bills) {
      if (bills.isEmpty()) {
        out.println("billing   none");
      }
      for (QueryDocumentSnapshot bill : bills) {
        out.println("billing   " + RecordWrites.BILLING + "/" + bill.getId());
        out.println("  model " + Values.text(bill.get("model")) + asked(bill) + ", tokens "
            + Values.text(bill.get("totalTokens"))
            + " (" + Values.text(bill.get("promptTokens")) + " in, " + Values.text(bill.get("outputTokens")) + " out)"
            + ", cost " + Values.text(bill.get("costMicroUsd")) + " µUSD" + (Boolean.TRUE.equals(bill.get("batch"))
                ? " (batch price)" : "")
            + ", billed " + Values.text(bill.get("billedAt"))
            + (bill.get(RecordWrites.RERUN) == null ? ""
                : ", run " + Values.text(bill.get(RecordWrites.RERUN)) + " (invalidated"
                    + " on purpose)"));
      }
    }

    private void printJob(List<QueryDocumentSnapshot> documents) {
      out.println("documents of this job");
      int billedOnce = 0;
      for (QueryDocumentSnapshot document : documents) {
        String key = document.getString("key");
        int bills = key == null ? 0 : read.billing(IdempotencyKey.of(key)).size();
        billedOnce += bills == 1 ? 1 : 0;
        out.println("  " + key + "  status " + Values.text(document.get("status")) + ", " + verdict(bills));
      }
      out.println("verdict: " + documents.size() + " document(s), " + billedOnce + " billed once"
          + (billedOnce == documents.size() ? "" : " (once inspect each document for the others)"));
    }

    /**
     * The paid calls the analysis made, as its tries recorded them before each call: "; 3 Gemini calls, 2 timed out".
     * Tries refused before any work (nothing billed) are not calls; a try whose holder died may have been one.
     */
    static String geminiCalls(LedgerRecord analyse) {
      long failed = analyse.calls().stream().filter(call -> call.outcome() == Call.Outcome.FAILED
          || call.outcome() == Call.Outcome.ABANDONED).count();
      long timedOut = analyse.calls().stream().filter(call -> call.error() != null
          && call.error().toLowerCase(Locale.ROOT).matches(".*(timed? ?out|timeout|deadline).*")).count();
      String calls = "; " + analyse.spent() + " Gemini call" + (analyse.spent() == 1 ? "" : "s");
      if (timedOut > 0) {
        calls += ", " + timedOut + " timed out";
      }
      if (failed > timedOut) {
        calls += ", " + (failed - timedOut) + " failed after the request left";
      }
      return calls;
    }

    private static String verdict(int bills) {
      return switch (bills) {
        case 0 -> "not billed";
        case 1 -> "billed once";
        default -> "billed " + bills + " times";
      };
    }

    /**
     * Bills counted against the runs of the analysis: one bill per run an operator asked for is "billed once per
     * run", not a bill doubled; two bills of one run are.
     */
    private static String verdict(List<QueryDocumentSnapshot> bills, int runs) {
      long distinctRuns =
          bills.stream().map(b -> b.get(RecordWrites.RERUN) == null ? 1L : ((Number) b.get(RecordWrites.RERUN))
              .longValue()).distinct().count();
      if (bills.size() > 1 && distinctRuns == bills.size() && bills.size() <= runs) {
        return "billed once per run (" + bills.size() + " runs, " + (bills.size() - 1) + " on purpose: once"
            + " invalidate)";
      }
      return verdict(bills.size());
    }
  }
}
