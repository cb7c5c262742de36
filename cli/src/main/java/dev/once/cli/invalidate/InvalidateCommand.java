package dev.once.cli.invalidate;

import com.google.cloud.firestore.DocumentSnapshot;
import dev.once.cli.Change;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.Reads;
import dev.once.cli.inspect.KeyCandidates;
import dev.once.cli.inspect.Values;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordWrites;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code once invalidate KEY EFFECT --reason …}: runs a finished effect once more, on purpose and on the record. Each
 * record it moves keeps the run that ended (state, outcome, tries) in its history, with who, when and why
 * ({@code Ledger.invalidate}), and becomes the next run's claim with its lease over: the next delivery of the event
 * (or {@code once redrive}) takes it over and runs the effect again — counted as processed, never as a duplicate —
 * and what that run shows outside carries a new key, {@code KEY/rerun-N}, so the results topic and the notified
 * endpoint see a new event. A re-analysis is billed in a bill of its own, beside the first.
 *
 * <p>What follows an effect for the same key is invalidated with it, or the re-run would stop there: a sync
 * analysis's publication (its notification follows from the new message, under the new key). A batch document's
 * analysis is run again in its next job, its run carried with it through the gathering and the job (billed apart,
 * published under its own publish record as KEY/rerun-N); one still waiting for its job is refused. Each record is moved in its
 * own transaction, fenced by its run: a record finished or claimed since it was read is left alone and said so, and
 * the command can simply be repeated to finish what it started.
 */
@Command(name = "invalidate", mixinStandardHelpOptions = true,
    description = {"Runs a finished effect once more, on purpose: analyse (a sync analysis, and its publication),"
        + " publish (a sync result) or notify (one notification). The run that ended is kept in the record's"
        + " history with who, when and why; the next delivery of the event (or once redrive) runs the effect again,"
        + " counted as processed, not as a duplicate, and what it shows outside carries the key KEY/rerun-N (the"
        + " results' idempotency_key, the notification's Idempotency-Key). A re-analysis is billed again, in a bill"
        + " of its own, whichever mode the pipeline runs in then. Refused without a reason, for a live claim, for a"
        + " document waiting for its batch job and for the analysis of a copy (same bytes as an earlier document)."
        + " Asks first (--yes). Writes the ledger"
        + " (roles/datastore.user)."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:invalidated (or already, and not run again yet)", "1:nothing invalidated: no such record, a"
        + " live claim, a run not finished, a document waiting for its batch job, a copy's analysis, changed in"
        + " between, or not confirmed",
        "2:Firestore cannot be read"
            + " or written",
        "64:usage error"})
public final class InvalidateCommand implements Callable<Integer> {
  /** A batch document's statuses while its job is to come or running: invalidating it then would queue it twice. */
  private static final Set<DocumentStatus> WAITING_FOR_A_JOB =
      EnumSet.of(DocumentStatus.QUEUED, DocumentStatus.GATHERED, DocumentStatus.SUBMITTED);
  /** The effects an operator may run again, and what follows each for the same key. */
  static final Map<String, List<String>> CHAINS = Map.of(
      Effects.ANALYSE, List.of(Effects.ANALYSE, Effects.PUBLISH),
      Effects.PUBLISH, List.of(Effects.PUBLISH),
      Effects.NOTIFY, List.of(Effects.NOTIFY));
  /** How long an instance may answer a finished record from its cache (Once's SettledCache) without reading it. */
  static final String CACHED_FOR = "10 minutes";

  private final Context context;

  public InvalidateCommand(Context context) {
    this.context = context;
  }

  @Parameters(index = "0", paramLabel = "KEY", description = "the event key, spelled as once inspect takes it")
  private String key;

  @Parameters(index = "1", paramLabel = "EFFECT", description = "analyse, publish or notify")
  private String effect;

  @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "why, for the record")
  private String reason;

  @Override
  public Integer call() {
    List<String> chain = CHAINS.get(effect);
    if (chain == null) {
      throw Failure.usage("EFFECT must be analyse, publish or notify, got '" + effect + "'"
          + (Effects.ALL.contains(effect) ? " (" + effect + " belongs to batch mode's jobs or to the dead-letter"
              + " topic, which cannot be re-run one document at a time)" : ""));
    }
    if (reason.isBlank()) {
      throw Failure.usage("--reason must say why the effect runs again");
    }
    PrintWriter out = context.out();
    Context.Target target = context.firestore();
    FirestoreLedger ledger = target.ledger();
    Optional<IdempotencyKey> found = KeyCandidates.of(key).stream()
        .filter(candidate -> ledger.lookup(candidate, effect).isPresent()).findFirst();
    if (found.isEmpty()) {
      out.println("nothing to invalidate: the ledger has no " + effect + " record for " + key.strip());
      return Exit.NOTHING;
    }
    IdempotencyKey chosen = found.get();
    if (effect.equals(Effects.ANALYSE) || effect.equals(Effects.PUBLISH)) {
      Optional<String> refused = notRerunnable(target, chosen, effect);
      if (refused.isPresent()) {
        out.println("not invalidated: " + refused.get());
        return Exit.NOTHING;
      }
    }
    List<LedgerRecord> records = new ArrayList<>();
    for (String step : chain) {
      ledger.lookup(chosen, step).ifPresent(records::add);
    }
    for (LedgerRecord record : records) {
      if (record.leaseLive()) {
        out.println("not invalidated: the claim of " + record.effect() + " for " + chosen + " is live until "
            + record.leaseExpiresAt() + " (attempt " + record.attempts() + "): a delivery is running it; once it has"
            + " finished, invalidate it");
        return Exit.NOTHING;
      }
    }
    LedgerRecord head = records.get(0);
    boolean finished = head.state() == RecordState.DONE || head.state() == RecordState.REJECTED;
    if (!finished && !head.awaitingRerun()) {
      out.println("not invalidated: " + effect + " of " + chosen + " has not finished (claimed, attempt "
          + head.attempts() + ", waiting for a redelivery): the next delivery runs it anyway (once stuck, once"
          + " redrive)");
      return Exit.NOTHING;
    }
    // Who is recorded is who is authenticated (Change): the audit cannot be given another name.
    String who = Change.confirm(context, "invalidate " + records.stream()
        .filter(r -> r.state() == RecordState.DONE || r.state() == RecordState.REJECTED)
        .map(r -> r.effect() + " (run " + r.generation() + ", " + r.state() + ")").toList()
        + " of " + chosen + ", so that the next delivery runs " + (chain.size() > 1 ? "them" : "it") + " once more"
        + (chain.contains(Effects.ANALYSE) ? " and bills the analysis again" : ""));
    int moved = 0;
    for (LedgerRecord record : records) {
      if (record.awaitingRerun()) {
        out.println("  " + record.effect() + ": run " + record.generation() + " is waiting to run already");
        continue;
      }
      if (record.state() != RecordState.DONE && record.state() != RecordState.REJECTED) {
        out.println("  " + record.effect() + ": left as it is (" + record.state() + ", not finished): it runs when"
            + " its turn comes");
        continue;
      }
      if (!ledger.invalidate(chosen, record.effect(), record.generation(), who, reason.strip())) {
        out.println("not invalidated: " + record.effect() + " of " + chosen + " changed after it was read (now "
            + ledger.lookup(chosen, record.effect()).map(r -> r.state() + ", run " + r.generation()).orElse("gone")
            + "); run the command again to finish what it started");
        return Exit.NOTHING;
      }
      moved++;
      out.println("  " + record.effect() + ": run " + record.generation() + " (" + record.state() + ", "
          + record.attempts() + (record.attempts() == 1 ? " attempt" : " attempts") + ") kept in its history; run "
          + (record.generation() + 1) + " waits for the next delivery");
    }
    LedgerRecord now = ledger.lookup(chosen, effect).orElse(head);
    out.println((moved > 0 ? "invalidated " : "already invalidated: ") + effect + " of " + chosen + " by " + who
        + ": " + reason.strip());
    out.println("the next delivery of the event runs it once more (" + redrive(chosen) + "); what that run shows"
        + " outside carries the key " + downstream(chosen, chain, ledger) + ". An instance that answered this key"
        + " in the last " + CACHED_FOR + " answers from its cache until then; once inspect " + chosen + " shows"
        + " the history (run " + now.generation() + " next)");
    return Exit.OK;
  }

  /**
   * Why the document's analysis cannot be run again now, if it cannot: it waits for its batch job (a second queueing
   * would run it twice), or, for analyse, it is a copy of an earlier document's bytes (its re-run would find the copy
   * again and call nothing: the first document is the one to re-analyse). A finished one can, in either mode: the run
   * rides with it through its next job, billed apart and published under KEY/rerun-N.
   */
  private static Optional<String> notRerunnable(Context.Target target, IdempotencyKey documentKey, String effect) {
    DocumentSnapshot analysis =
        Reads.await(target.db().collection(RecordWrites.ANALYSES).document(documentKey.documentId())
            .get(), "the analysis of " + documentKey);
    if (!analysis.exists()) {
      return Optional.empty();
    }
    String status = analysis.getString("status");
    if ("batch".equals(analysis.getString("mode"))
        && WAITING_FOR_A_JOB.contains(DocumentStatus.of(status).orElse(null))) {
      return Optional.of(documentKey + " waits for its batch job (status " + Values.text(status)
          + (analysis.get("job") == null ? "" : ", job " + Values.text(analysis.get("job"))) + "): run again now, it"
          + " would be queued a second time while its job runs; invalidate it once that job has completed it");
    }
    if (effect.equals(Effects.ANALYSE) && DocumentStatus.DUPLICATE.is(analysis.getString("status"))) {
      return Optional.of(documentKey + " holds the same bytes as " + Values.text(analysis.get("duplicateOf"))
          + ", which was the one analysed and billed: a re-run would find the copy again and call nothing."
          + " Invalidate the analyse of " + Values.text(analysis.get("duplicateOf")) + " instead");
    }
    return Optional.empty();
  }

  private static String redrive(IdempotencyKey key) {
    return key.value().startsWith("gcs:") ? "once redrive gs://" + key.value().substring("gcs:".length())
        : "a redelivery of its message, or once redrive --dead-letter-subscription";
  }

  /** The key the re-run's message or notification carries: that of the last effect of the chain to run again. */
  private static IdempotencyKey downstream(IdempotencyKey key, List<String> chain, FirestoreLedger ledger) {
    String shown = chain.get(chain.size() - 1);
    return key.rerun(ledger.lookup(key, shown).map(LedgerRecord::generation).orElse(1));
  }
}
