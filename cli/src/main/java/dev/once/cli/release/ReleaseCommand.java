package dev.once.cli.release;

import dev.once.cli.Change;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.inspect.KeyCandidates;
import dev.once.cli.inspect.Values;
import dev.once.firestore.FirestoreLedger;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.Effects;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code once release KEY EFFECT --reason …}: gives up a claim, fenced by its token. It reads the record, then
 * releases the claim held with that token ({@code Ledger.forceRelease}): if the holder finished or another delivery
 * took the claim over in between, nothing is written and it says so. The record keeps who released it, when and why.
 * A claim whose lease is still live is refused unless {@code --live}: its holder may be running the effect right
 * now, and a release lets the next delivery run it a second time.
 */
@Command(name = "release", mixinStandardHelpOptions = true,
    description = {"Gives up the claim of EFFECT for KEY: its lease ends now, so the next delivery takes it over; the"
        + " record says who released it, when and why. Fenced by the claim's token: if the holder finished or"
        + " another delivery took over after the record was read, nothing changes. A live lease is refused unless"
        + " --live (its holder may be running the effect now)."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:released", "1:nothing released: no such claim, already finished, lease live without --live,"
        + " or the holder finished or another took over in between", "2:Firestore cannot be read or written",
        "64:usage error"})
public final class ReleaseCommand implements Callable<Integer> {
  private final Context context;

  public ReleaseCommand(Context context) {
    this.context = context;
  }

  @Parameters(index = "0", paramLabel = "KEY", description = "the event key, spelled as once inspect takes it")
  private String key;

  @Parameters(index = "1", paramLabel = "EFFECT",
      description = "analyse, submit, complete, publish, notify or dead-letter")
  private String effect;

  @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "why, for the record")
  private String reason;

  @Option(names = "--live", description = "release even though the lease is live (the holder may still be running)")
  private boolean live;

  @Override
  public Integer call() {
    if (!Effects.ALL.contains(effect)) {
      throw Failure.usage("EFFECT must be one of " + String.join(", ", Effects.ALL) + ", got '" + effect + "'");
    }
    if (reason.isBlank()) {
      throw Failure.usage("--reason must say why");
    }
    PrintWriter out = context.out();
    FirestoreLedger ledger = context.firestore().ledger();
    List<IdempotencyKey> candidates = KeyCandidates.of(key);
    Optional<LedgerRecord> found = Optional.empty();
    IdempotencyKey chosen = null;
    for (IdempotencyKey candidate : candidates) {
      found = ledger.lookup(candidate, effect);
      if (found.isPresent()) {
        chosen = candidate;
        break;
      }
    }
    if (found.isEmpty()) {
      out.println("nothing to release: the ledger has no " + effect + " record for " + key.strip());
      return Exit.NOTHING;
    }
    LedgerRecord record = found.get();
    if (record.state() != RecordState.CLAIMED) {
      out.println("nothing to release: " + effect + " of " + chosen + " is " + record.state() + " (updated "
          + Values.instant(record.updatedAt()) + ")");
      return Exit.NOTHING;
    }
    if (record.leaseLive() && !live) {
      out.println("not released: the lease of " + effect + " for " + chosen + " is live until "
          + record.leaseExpiresAt() + " (token " + record.token() + ", attempt " + record.attempts() + "): a delivery"
          + " may be running the effect now, and a release lets the next one run it again. Wait for the lease to"
          + " run out, or pass --live.");
      return Exit.NOTHING;
    }
    // Who is recorded is who is authenticated (Change): the audit cannot be given another name.
    String who = Change.confirm(context, "release " + effect + " of " + chosen + " (token " + record.token() + ", "
        + (record.leaseLive() ? "lease live until " + record.leaseExpiresAt() : "lease run out") + ")");
    try {
      ledger.forceRelease(chosen, effect, record.token(), who, reason.strip(), live);
    } catch (LeaseLost lost) {
      Optional<LedgerRecord> now = ledger.lookup(chosen, effect);
      boolean renewed = now.filter(r -> r.state() == RecordState.CLAIMED && r.token() == record.token()
          && r.leaseLive()).isPresent();
      out.println("not released: " + (renewed
          ? "its holder renewed the lease of " + effect + " for " + chosen + " after it was read (token "
              + record.token() + ", live until " + now.get().leaseExpiresAt() + "): it is at work. Pass --live to"
              + " release it anyway"
          : "token " + record.token() + " no longer holds " + effect + " for " + chosen + " (the holder finished or"
              + " another delivery took it over after it was read; now "
              + now.map(r -> r.state() + ", token " + r.token()).orElse("gone") + ")"));
      return Exit.NOTHING;
    }
    LedgerRecord released = ledger.lookup(chosen, effect).orElse(record);
    out.println("released " + effect + " of " + chosen + " (token " + record.token() + ", " + record.attempts()
        + (record.attempts() == 1 ? " attempt" : " attempts") + "): lease ended at "
        + Values.instant(released.leaseExpiresAt()) + ", by " + who + ": " + reason.strip());
    out.println("the next delivery takes it over; if none will come, once redrive the event");
    return Exit.OK;
  }
}
