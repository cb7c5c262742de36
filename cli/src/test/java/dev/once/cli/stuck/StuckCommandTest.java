package dev.once.cli.stuck;

import static dev.once.pipeline.DocumentStatus.GATHERED;
import static dev.once.pipeline.DocumentStatus.QUEUED;
import static dev.once.pipeline.DocumentStatus.SUBMITTED;
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
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordWrites;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code once stuck} against the Firestore emulator. */
class StuckCommandTest {
  private static final Pattern MORE = Pattern.compile("--page-token (\\S+)");
  private final FirestoreLedger ledger = CliFirestore.ledger();

  @BeforeEach
  void clear() {
    CliFirestore.clear();
  }

  private Claim claim(String key, String effect) {
    return ((ClaimResult.Acquired) ledger.claim(IdempotencyKey.of(key), effect)).claim();
  }

  /** A claim whose holder failed: released with an error, so its lease has ended. */
  private void failed(String key, String effect, String error) {
    ledger.release(claim(key, effect), error);
  }

  private static void analysis(String key, String status, Map<String, Object> more) {
    Map<String, Object> fields = new HashMap<>(more);
    fields.put("key", key);
    fields.put("status", status);
    CliFirestore.put(RecordWrites.ANALYSES, IdempotencyKey.of(key).documentId(), fields);
  }

  @Test
  void nothingStuck_exits1() {
    ledger.complete(claim("gcs:inbox/fine.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    claim("gcs:inbox/working.pdf#1", Effects.ANALYSE); // a live lease, first attempt: working, not stuck
    analysis("gcs:inbox/fresh.pdf#1", SUBMITTED.value(), Map.of("job", "batches/1", "updatedAt", CliFirestore.ago(60)));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck");

    assertEquals(Exit.NOTHING, result.status(), result.all());
    assertTrue(result.out().contains("nothing is stuck"), result.all());
  }

  @Test
  void listsExpiredClaims_retriedClaims_oldSubmissions_andDeferredDocumentsOldestFirst() {
    failed("gcs:inbox/expired.pdf#1", Effects.ANALYSE, "Gemini answered 503");
    String retried = "pubsub:retried";
    for (int i = 0; i < 2; i++) {
      failed(retried, Effects.NOTIFY, "endpoint timed out");
    }
    claim(retried, Effects.NOTIFY); // third attempt, live
    ledger.complete(claim("gcs:inbox/done.pdf#1", Effects.ANALYSE), Map.of(), SideWrites.NONE);
    analysis("gcs:inbox/old.pdf#1", SUBMITTED.value(),
        Map.of("job", "batches/old", "updatedAt", CliFirestore.ago(7200)));
    analysis("gcs:inbox/new.pdf#1", SUBMITTED.value(), Map.of("job", "batches/new", "updatedAt", CliFirestore.ago(60)));
    analysis("gcs:inbox/later.pdf#1", "deferred", Map.of("deferredAt", CliFirestore.ago(60), "reason", "budget"));
    analysis("gcs:inbox/earlier.pdf#1", "deferred", Map.of("deferredAt", CliFirestore.ago(600), "reason", "budget"));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck", "--older-than", "1h");

    assertEquals(Exit.OK, result.status(), result.all());
    String out = result.out();
    assertTrue(out.contains("claims whose lease ran out: 1"), result.all());
    assertTrue(out.contains("analyse     gcs:inbox/expired.pdf#1  attempts 1, token 2, lease expired at"),
        result.all());
    assertTrue(out.contains("last error: Gemini answered 503"), result.all());
    // Beside each key, the hash its log lines show instead of it.
    assertTrue(out.contains("[keyHash " + IdempotencyKey.logHash("gcs:inbox/expired.pdf#1") + "]"), result.all());
    assertTrue(out.contains("[keyHash " + IdempotencyKey.logHash("gcs:inbox/old.pdf#1") + "]"), result.all());
    assertTrue(out.contains("claims with 3 or more attempts: 1"), result.all());
    assertTrue(out.contains("notify      pubsub:retried  attempts 3, token 5, lease live until"), result.all());
    assertTrue(out.contains("gcs:inbox/old.pdf#1  job batches/old"), result.all());
    assertFalse(out.contains("gcs:inbox/new.pdf#1"), result.all());
    assertFalse(out.contains("done.pdf"), result.all());
    assertTrue(out.indexOf("gcs:inbox/earlier.pdf#1  deferred") < out.indexOf("gcs:inbox/later.pdf#1  deferred")
        && out.indexOf("gcs:inbox/earlier.pdf#1") > 0, "oldest first\n" + result.all());
    assertFalse(out.contains("more:"), result.all());
  }

  @Test
  void claimsWaitingForAModelGoogleDoesNotServe_sayWhatToDo() {
    String key = "gcs:inbox/waiting.pdf#1";
    for (int i = 0; i < 3; i++) {
      failed(key, Effects.ANALYSE, CliFirestore.modelRefused("gemini-3.5-flash-lite"));
    }

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("last error: Gemini does not serve the model gemini-3.5-flash-lite"),
        result.all());
    assertTrue(result.out().contains("  1 of these wait for a model Google does not serve (their last error: Gemini"
        + " answered 404): set GEMINI_MODEL to a model Google serves (once models) and redeploy"), result.all());
  }

  /** A deferral releases its claim: the document waits for budget, the reconciler resumes it; no re-drive. */
  @Test
  void aClaimReleasedByADeferral_isListedAsDeferred_notAsALeaseThatRanOut() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/big.pdf#1");
    ledger.release(claim(key.value(), Effects.ANALYSE), Once.DEFERRED + "the day's budget is spent",
        false, SideWrites.NONE);
    analysis(key.value(), "deferred",
        Map.of("deferredAt", CliFirestore.ago(60), "reason", "the day's budget is spent"));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck");

    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().contains("claims whose lease ran out: none"), result.all());
    assertTrue(result.out().contains("documents deferred by the spending guard, oldest first: 1"), result.all());
    assertEquals(1, result.out().split("gcs:inbox/big.pdf#1", -1).length - 1, "listed once\n" + result.all());
  }

  @Test
  void pages_throughEveryList_showingEachStuckThingOnce() {
    Set<String> expected = new HashSet<>();
    for (int i = 0; i < 5; i++) {
      failed("gcs:inbox/expired-" + i + ".pdf#1", Effects.ANALYSE, "boom");
      expected.add("gcs:inbox/expired-" + i + ".pdf#1");
      analysis("gcs:inbox/waiting-" + i + ".pdf#1", SUBMITTED.value(),
          Map.of("job", "batches/" + i, "updatedAt", CliFirestore.ago(7200 + i)));
      expected.add("gcs:inbox/waiting-" + i + ".pdf#1");
    }
    for (int i = 0; i < 3; i++) {
      analysis("gcs:inbox/deferred-" + i + ".pdf#1", "deferred", Map.of("deferredAt", CliFirestore.ago(100 + i)));
      expected.add("gcs:inbox/deferred-" + i + ".pdf#1");
    }

    List<String> seen = new ArrayList<>();
    String token = null;
    int pages = 0;
    do {
      OnceRunner.Result page = token == null ? OnceRunner.run(CliFirestore.env(), "stuck", "--limit", "2")
          : OnceRunner.run(CliFirestore.env(), "stuck", "--limit", "2", "--page-token", token);
      assertEquals(Exit.OK, page.status(), page.all());
      Matcher m = Pattern.compile("(gcs:inbox/\\S+#1)").matcher(page.out());
      while (m.find()) {
        seen.add(m.group(1));
      }
      Matcher more = MORE.matcher(page.out());
      token = more.find() ? more.group(1) : null;
      pages++;
    } while (token != null && pages < 10);

    assertEquals(expected.size(), seen.size(), "each shown once: " + seen);
    assertEquals(expected, new HashSet<>(seen));
    assertEquals(3, pages, "5 items a list, 2 a page: 3 pages");
  }

  /**
   * A month-end burst: documents queued far past the wait (and one not), a gathering sealed long ago and never
   * submitted (and one just opened), a job running past the threshold (and one younger): the old ones are listed, each
   * list with what to do, the cap's state named for the queued ones.
   */
  @Test
  void batchMode_listsDocumentsQueuedPastTheWait_gatheringsNeverSubmitted_andJobsRunningLong() {
    analysis("gcs:inbox/burst-old.pdf#1", QUEUED.value(), Map.of("queuedAt", CliFirestore.ago(3600), "size", 10));
    analysis("gcs:inbox/burst-new.pdf#1", QUEUED.value(), Map.of("queuedAt", CliFirestore.ago(60), "size", 10));
    CliFirestore.put(Gatherings.COLLECTION, "g-sealed", Map.of("state", Gatherings.OPEN, "inFlight", true,
        "openedAt", CliFirestore.ago(2 * 3600), "sealedAt", CliFirestore.ago(2 * 3600), "members", List.of("a", "b")));
    analysis("gcs:inbox/in-g-sealed-a.pdf#1", GATHERED.value(), Map.of("batch", "g-sealed"));
    analysis("gcs:inbox/in-g-sealed-b.pdf#1", GATHERED.value(), Map.of("batch", "g-sealed"));
    CliFirestore.put(Gatherings.COLLECTION, "g-fresh", Map.of("state", Gatherings.OPEN, "inFlight", true,
        "openedAt", CliFirestore.ago(5)));
    CliFirestore.put(Gatherings.COLLECTION, "g-long", Map.of("state", Gatherings.SUBMITTED, "inFlight", true,
        "openedAt", CliFirestore.ago(26 * 3600), "submittedAt", CliFirestore.ago(25 * 3600), "job", "batches/long",
        "documents", 1000));
    CliFirestore.put(Gatherings.COLLECTION, "g-young", Map.of("state", Gatherings.SUBMITTED, "inFlight", true,
        "openedAt", CliFirestore.ago(3600), "submittedAt", CliFirestore.ago(3600), "job", "batches/young",
        "documents", 3));

    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck");

    assertEquals(Exit.OK, result.status(), result.all());
    String out = result.out();
    assertTrue(out.contains("documents queued longer than 20m (BATCH_MAX_WAIT_SECONDS 300 s and more), oldest first: 1"
        + " (batch jobs in flight: 4 of 90, below the cap: the reconciler should have submitted them"), result.all());
    assertTrue(out.contains("  gcs:inbox/burst-old.pdf#1  queued "), result.all());
    assertFalse(out.contains("burst-new"), result.all());
    assertTrue(out.contains("gatherings opened longer than 20m ago whose batch job was not made: 1 (the reconciler"
        + " submits them again every run"), result.all());
    assertTrue(out.contains("  gathering g-sealed  opened "), result.all());
    assertTrue(out.contains(", 2 documents"), result.all());
    assertFalse(out.contains("g-fresh"), result.all());
    assertTrue(out.contains("batch jobs running longer than 1d: 1 (Google aims at 24 h"), result.all());
    assertTrue(
        out.matches(
            "(?s).*\\n  batches/long  gathering g-long, 1000 documents, submitted \\S+ \\(1d1h(\\d+s)? ago\\).*"),
        result.all());
    assertFalse(out.contains("batches/young"), result.all());

    // Told the cap the functions run with, the same queue is a full cap; a shorter threshold lists the young job.
    Map<String, String> env = new HashMap<>(CliFirestore.env());
    env.put("BATCH_MAX_JOBS_IN_FLIGHT", "4");
    OnceRunner.Result full = OnceRunner.run(env, "stuck", "--jobs-longer-than", "30m", "--queued-longer-than", "30m");
    assertTrue(full.out().contains("documents queued longer than 30m (BATCH_MAX_WAIT_SECONDS 300 s and more), oldest"
        + " first: 1 (batch jobs in flight: 4 of 4, the cap: they wait for a job to complete"), full.all());
    assertTrue(full.out().contains("batch jobs running longer than 30m: 2"), full.all());
  }

  @Test
  void aTokenItDidNotPrint_isAUsageError() {
    OnceRunner.Result result = OnceRunner.run(CliFirestore.env(), "stuck", "--page-token", "bm90LWEtdG9rZW4");
    assertEquals(Exit.USAGE, result.status(), result.all());
    assertTrue(result.err().contains("--page-token is not a token once stuck printed"), result.all());
    OnceRunner.Result span = OnceRunner.run(CliFirestore.env(), "stuck", "--older-than", "an hour");
    assertEquals(Exit.USAGE, span.status(), span.all());
    assertTrue(span.err().contains("is not a span of time"), span.all());
  }
}
