package dev.once.cli.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.cli.CliFirestore;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import dev.once.firestore.FirestoreLedger;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.SideWrites;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.observe.EventLog;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordWrites;
import dev.once.run.RunLock;
import dev.once.run.StackInfo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code once stats} from the ledger (the emulator) and from a dev/run's function logs. */
class StatsCommandTest {
  private final FirestoreLedger ledger = CliFirestore.ledger();

  @BeforeEach
  void clear() {
    CliFirestore.clear();
  }

  private Claim claim(String key, String effect) {
    return ((ClaimResult.Acquired) ledger.claim(IdempotencyKey.of(key), effect)).claim();
  }

  @Test
  void fromTheLedger_countsWhatWasWrittenInTheWindow_byStateAndEffect() {
    ledger.complete(claim("gcs:inbox/a.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    ledger.complete(claim("gcs:inbox/b.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    ledger.reject(claim("gcs:inbox/c.txt#1", Effects.ANALYSE), "content type", SideWrites.NONE);
    // Given up at its cap of paid tries: failed, as its analysis and its log line say.
    ledger.reject(claim("gcs:inbox/f.pdf#1", Effects.ANALYSE), Once.GAVE_UP
        + "5 tries that may have run: SocketTimeoutException: timeout", SideWrites.NONE);
    ledger.complete(claim("gcs:inbox/a.pdf#1", Effects.PUBLISH), Map.of(), SideWrites.NONE);
    ledger.release(claim("gcs:inbox/b.pdf#1", Effects.PUBLISH), "Pub/Sub unavailable");
    claim("pubsub:1", Effects.NOTIFY);
    // Written three hours ago: outside a one-hour window.
    CliFirestore.put("idempotency", "old-record", Map.of("key", "gcs:inbox/old.pdf#1", "effect", Effects.ANALYSE,
        "state", "DONE", "updatedAt", CliFirestore.ago(3 * 3600)));
    for (int i = 0; i < 2; i++) {
      CliFirestore.put(RecordWrites.ANALYSES, "deferred-" + i, Map.of("key", "gcs:inbox/d" + i + ".pdf#1",
          "status", "deferred", "deferredAt", CliFirestore.ago(60)));
    }
    CliFirestore.put(RecordWrites.ANALYSES, "deferred-long-ago",
        Map.of("key", "gcs:inbox/e.pdf#1", "status", "deferred",
            "deferredAt", CliFirestore.ago(3 * 3600)));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "1h");

    assertEquals(Exit.OK, result.status(), result.all());
    String out = result.out();
    assertTrue(out.contains("from the ledger"), result.all());
    assertTrue(out.contains("  analyse               2          —          1          1          2         —"),
        result.all());
    assertTrue(out.contains("  publish               1          —          0          1          0         —"),
        result.all());
    assertTrue(
        out.contains("  notify                0          —          0          0          0         —  in_flight 1"),
        result.all());
    assertTrue(out.contains("duplicates write nothing to the ledger: --from logs counts them"), result.all());
  }

  /**
   * Batch mode as it stands: documents queued (the oldest's wait) and gathered, the jobs in flight by state against
   * the cap, the jobs done.
   */
  @Test
  void fromTheLedger_theBatchQueueAndTheJobsByStateAreCounted() {
    ledger.complete(claim("gcs:inbox/q.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    for (int i = 0; i < 3; i++) {
      CliFirestore.put(RecordWrites.ANALYSES, "queued-" + i,
          Map.of("key", "gcs:inbox/q" + i + ".pdf#1", "status", "queued",
              "queuedAt", CliFirestore.ago(600 + i)));
    }
    CliFirestore.put(RecordWrites.ANALYSES, "gathered-0", Map.of("key", "gcs:inbox/g.pdf#1", "status", "gathered"));
    CliFirestore.put(Gatherings.COLLECTION, "open", Map.of("state", "open", "inFlight", true,
        "openedAt", CliFirestore.ago(5)));
    CliFirestore.put(Gatherings.COLLECTION, "sealed", Map.of("state", "open", "inFlight", true,
        "openedAt", CliFirestore.ago(5), "sealedAt", CliFirestore.ago(4), "members", List.of("x")));
    CliFirestore.put(Gatherings.COLLECTION, "running", Map.of("state", "submitted", "inFlight", true,
        "openedAt", CliFirestore.ago(7300), "submittedAt", CliFirestore.ago(7200), "job", "batches/r"));
    CliFirestore.put(Gatherings.COLLECTION, "done", Map.of("state", "done", "inFlight", false));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "1h");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().matches("(?s).*  batch mode, now: 3 documents queued \\(the oldest waiting 10m\\d+s\\), 1"
        + " gathered into jobs being made\n.*"), result.all());
    assertTrue(result.out().matches("(?s).*  batch jobs: 3 in flight of 90 \\(BATCH_MAX_JOBS_IN_FLIGHT\\): 1 gathering,"
        + " 1 sealed and not submitted, 1 submitted \\(the oldest 2h(\\d+s)? ago\\); 1 done\n.*"), result.all());
  }

  /** Sync mode: no batch section. */
  @Test
  void fromTheLedger_withoutBatchWork_thereIsNoBatchSection() {
    ledger.complete(claim("gcs:inbox/s.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "1h");
    assertEquals(Exit.OK, result.status(), result.all());
    assertFalse(result.out().contains("batch"), result.all());
  }

  @Test
  void fromTheLedger_deliveriesThatMetAModelGoogleDoesNotServe_areSaidToWaitForIt() {
    ledger.release(claim("gcs:inbox/w.pdf#1", Effects.ANALYSE),
        CliFirestore.modelRefused("gemini-3.5-flash-lite"));
    ledger.release(claim("gcs:inbox/x.pdf#1", Effects.ANALYSE), "Gemini answered 503 UNAVAILABLE: overloaded");

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "1h");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("  1 of the failed met a model Google does not serve (Gemini answered 404)"),
        result.all());
  }

  /** A deferral releases its claim with an error, and writes the deferred analysis: one deferred, nothing failed. */
  @Test
  void fromTheLedger_aDeferredDocument_isCountedOnceAsDeferred_notAsFailed() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/big.pdf#1");
    ledger.release(claim(key.value(), Effects.ANALYSE), Once.DEFERRED + "the day's budget is spent",
        false, SideWrites.NONE);
    CliFirestore.put(RecordWrites.ANALYSES, key.documentId(), Map.of("key", key.value(), "status", "deferred",
        "deferredAt", CliFirestore.ago(60)));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "1h");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("  analyse               0          —          0          0          1         —"),
        result.all());
  }

  @Test
  void anEmptyWindow_exits1() {
    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--since", "5m");
    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("nothing happened in this window"), result.all());
  }

  @Test
  void fromTheLogs_countsTheFunctionsEventLines_asTheMetricDoes(@TempDir Path logs) throws Exception {
    write(logs.resolve("DocumentUploaded.log"), log -> {
      EventLog.record(log, "DocumentUploaded", "gcs:inbox/a.pdf#1", Effects.ANALYSE, OutcomeLabel.PROCESSED, 1, 900,
          Map.of());
      for (int i = 0; i < 3; i++) {
        EventLog.record(log, "DocumentUploaded", "gcs:inbox/a.pdf#1", Effects.PUBLISH, OutcomeLabel.DUPLICATE, 1, 40,
            Map.of());
      }
      EventLog.refused(log, "DocumentUploaded", "no bucket", System.nanoTime(), "eventId", "7");
      log.info("ready", Map.of("function", "DocumentUploaded")); // not an event line
    });
    write(logs.resolve("MessageDelivered.log"), log -> EventLog.record(log, "MessageDelivered", "gcs:inbox/a.pdf#1",
        Effects.NOTIFY, OutcomeLabel.FAILED, 2, 10_000, Map.of()));
    Files.writeString(logs.resolve("MessageDelivered.log"), "Exception in thread main\n\tat x\n{\"cut short",
        StandardOpenOption.APPEND);
    Map<Part, Integer> ports = new HashMap<>(Ports.free().byPart());
    StackInfo stack = new StackInfo(ProcessHandle.current().pid(), "sync", "once-local", "idempotency", ports,
        "stand-in", logs.toString(), Instant.now().toString(), List.of());
    try (RunLock lock = RunLock.acquire(logs, stack).lock()) {
      OnceRunner.Result result = OnceRunner.run(Map.of("ONCE_RUN_DIR", logs.toString()), "stats", "--from", "logs");

      assertEquals(Exit.OK, result.status(), result.all());
      String out = result.out();
      assertTrue(out.contains("from the functions' log lines in " + logs), result.all());
      assertTrue(out.contains("  batch mode: not shown, no Firestore emulator answers on"), result.all());
      assertTrue(out.contains("  analyse               1          0          0          0          0     0.0 %"),
          result.all());
      assertTrue(out.contains("  publish               0          3          0          0          0   100.0 %"),
          result.all());
      assertTrue(out.contains("  notify                0          0          0          1          0     0.0 %"),
          result.all());
      assertTrue(out.contains("  none                  0          0          1          0          0     0.0 %"),
          result.all());
    }
  }

  @Test
  void fromTheLogs_withoutADevRun_isAUsageError() {
    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stats", "--from", "logs");
    assertEquals(Exit.USAGE, result.status(), result.all());
    assertTrue(result.err().contains("none is running"), result.all());
  }

  @Test
  void againstCloudMonitoring_aWindowUnderAMinute_isAUsageError() {
    OnceRunner.Result result = OnceRunner.run(Map.of("GOOGLE_CLOUD_PROJECT", "my-project"), "stats", "--since", "30s");
    assertEquals(Exit.USAGE, result.status(), result.all());
    assertTrue(result.err().contains("--since must be at least 1m against Cloud Monitoring"), result.all());
  }

  /** The lines a function prints, captured as its log file holds them. */
  private static void write(Path file, Consumer<Log> logging) throws Exception {
    ByteArrayOutputStream lines = new ByteArrayOutputStream();
    logging.accept(Log.to(new PrintStream(lines, true, StandardCharsets.UTF_8)));
    Files.write(file, lines.toByteArray());
  }
}
