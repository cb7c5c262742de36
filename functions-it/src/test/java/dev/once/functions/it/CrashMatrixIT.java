package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.Await;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The document flow, killed with SIGKILL at each point of its way (sync mode). Each point gets 10 documents,
 * one at a time so a kill interrupts one event only; every 5th document's process is killed at the point, then
 * replaced (the watchdog), and Eventarc (the relay) redelivers. Whatever the point: every document is analysed
 * and billed exactly once, published at least once (every copy with the document's key), notified once; and
 * Gemini was called at most once per document plus once per kill at or after the call. Each kill's time to recovery
 * (the kill to the notification) is printed; with the default lease and Gemini timeout it is within 90 s.
 */
class CrashMatrixIT {
  private static final int DOCUMENTS = 10;
  private static final int KILL_EVERY = 5;
  private static final Duration PER_DOCUMENT = Duration.ofSeconds(60);
  /**
   * The longest lease a killed holder leaves here is a publisher's (its 10 s timeout + 2 s, checked before it
   * publishes); then redelivery and the work. Under 60 s, the default lease: a recovery that waited for it, or for
   * the reconciler, is over this; the rest is the machine's load (35 s seen beside other builds, load 30).
   */
  private static final Duration RECOVERY_BOUND = Duration.ofSeconds(55);
  /** The bound on recovery with the default lease and Gemini timeout. */
  private static final Duration DEFAULT_RECOVERY_BOUND = Duration.ofSeconds(90);
  private static PipelineStack stack;
  /**
   * The defaults' case, on a stack of its own with the default lease and Gemini timeout: its minute and a half of
   * waiting for a lease runs beside the matrix.
   */
  private static CompletableFuture<Void> defaults;
  private static PipelineStack defaultStack;
  private static final RecoveryTimes RECOVERY = new RecoveryTimes("CrashMatrixIT (sync mode)",
      "ONCE_LEASE_SECONDS 3, GEMINI_TIMEOUT_SECONDS 2, Eventarc redelivering within 1 s; the defaults' row: 60 and 60",
      "the document notified and the killed effect's record done");

  @BeforeAll
  static void start() {
    CompletableFuture<PipelineStack> starting = CompletableFuture.supplyAsync(() -> PipelineStack.start(
        new PipelineStack.Config("sync", Integer.parseInt(dev.once.config.OnceSetting.ONCE_LEASE_SECONDS.defaultValue()),
            RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
            java.util.Map.of("GEMINI_TIMEOUT_SECONDS",
                dev.once.pipeline.PipelineSetting.GEMINI_TIMEOUT_SECONDS.defaultValue()))), PipelineStack.BACKGROUND);
    // A short lease, so a killed holder's claim is taken over seconds later; a short Gemini timeout, as a paid
    // call's lease outlasts it (2 s + 5 s); a patient relay, as Eventarc is.
    stack = PipelineStack.start(new PipelineStack.Config("sync", 3,
        RetryPolicy.defaults().withMaxAttempts(200).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        java.util.Map.of("GEMINI_TIMEOUT_SECONDS", "2")));
    stack.keepAlive();
    // One document through before the matrix: a new instance's first event builds its clients, which the matrix does
    // not measure (and a cold instance's first call could outlast the 2 s Gemini timeout: a paid call more).
    String warm = upload("crash-warm-up", 0);
    Await.until(PER_DOCUMENT, () -> stack.notifiedWith(warm).size() == 1, "the warm-up's notification");
    defaultStack = starting.join();
    // The kill and the replacement's start before the matrix, so no process start competes with its short Gemini
    // timeout; the wait for the lease, and the recovery, beside it.
    Killed killed = killDuringTheCallWithTheDefaults(defaultStack);
    defaults = CompletableFuture.runAsync(() -> assertTakenOverWithTheDefaults(defaultStack, killed),
        PipelineStack.BACKGROUND);
  }

  @AfterAll
  static void stop() {
    RECOVERY.report("recovery-crash-matrix.md");
    stack.close();
    defaultStack.close();
  }

  @ParameterizedTest(name = "killed {0}")
  @ValueSource(strings = {"after-claim:analyse", "during-gemini", "before-complete:analyse",
      "after-complete:analyse", "before-complete:publish"})
  void everyDocument_isAnalysedBilledAndNotifiedOnce_whateverThePointOfTheKill(String point) throws IOException {
    String folder = "crash-" + point.replace(':', '-');
    Path crashLog = stack.logDir.resolve(folder + ".crashes");
    Files.deleteIfExists(crashLog);
    boolean external = point.equals("during-gemini");
    if (external) {
      stack.disarmCrash("DocumentUploaded");
    } else {
      stack.armCrash("DocumentUploaded", point, "gcs:inbox/" + folder + "/doc-(00|05)\\.pdf#\\d+", crashLog);
    }
    int restartsBefore = stack.restarts("DocumentUploaded");
    long geminiBefore = stack.gemini.count("generateContent");

    List<String> keys = new ArrayList<>();
    int externalKills = 0;
    for (int i = 0; i < DOCUMENTS; i++) {
      boolean kill = i % KILL_EVERY == 0;
      if (external && kill) {
        // This document's call only: the takeover's call, a lease after the kill, is answered at once however long
        // the kill took (a takeover meeting the delay timed out at 2 s: a paid call more, by the test's doing).
        stack.gemini.latencyNext("generateContent", 1, Duration.ofSeconds(3));
      }
      long callsBefore = stack.gemini.count("generateContent");
      java.time.Instant sent = java.time.Instant.now();
      String key = upload(folder, i);
      keys.add(key);
      if (external && kill) {
        // The call has reached Gemini and waits for its answer: kill the process now.
        Await.until(PER_DOCUMENT, () -> stack.gemini.count("generateContent") > callsBefore, "the Gemini call of " + key);
        stack.function("DocumentUploaded").kill();
        externalKills++;
      }
      Await.until(PER_DOCUMENT, () -> stack.notifiedWith(key).size() == 1, "the notification of " + key);
      if (kill) {
        assertRecovered(point, key, sent, effectOf(point), RECOVERY_BOUND);
      }
    }

    int kills = external ? externalKills : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(2, kills, "one kill per 5 documents");
    Await.until(PER_DOCUMENT, () -> stack.restarts("DocumentUploaded") - restartsBefore >= 2, "the killed processes replaced");
    Await.until(PER_DOCUMENT, stack::relayIdle, "every redelivery finished");

    stack.assertAnalysedBilledAndPublishedOnce(keys);
    for (String key : keys) {
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
    Set<String> ours = new HashSet<>(keys);
    assertTrue(stack.published().stream().map(m -> m.getAttributesMap().getOrDefault("idempotency_key", ""))
        .filter(k -> k.contains("/" + folder + "/")).allMatch(ours::contains), "every copy carries a document's key");

    long calls = stack.gemini.count("generateContent") - geminiBefore;
    boolean killedAtOrAfterTheCall = !point.equals("after-claim:analyse");
    long bound = DOCUMENTS + (killedAtOrAfterTheCall ? kills : 0);
    assertTrue(calls >= DOCUMENTS && calls <= bound,
        "Gemini calls " + calls + " within [" + DOCUMENTS + ", " + bound + "] for " + point);
    if (point.equals("after-complete:analyse") || point.equals("before-complete:publish")) {
      assertEquals(DOCUMENTS, calls, "a kill after the analysis was committed costs no second Gemini call");
    }
  }

  /**
   * The slowest case with the defaults: a holder killed during its paid call, whose lease outlasts that call (the
   * default Gemini timeout plus 20 s), is taken over once the lease has run out; then the document goes through.
   */
  @org.junit.jupiter.api.Test
  void withTheDefaultLeaseAndGeminiTimeout_aHolderKilledDuringItsCall_isTakenOverWithin90Seconds() throws Throwable {
    try {
      defaults.get(5, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      throw e.getCause();
    }
  }

  /** The document whose holder was killed, and when it was sent. */
  private record Killed(String key, java.time.Instant sent) {}

  /** Kills the holder of a document's paid call, and waits for its replacement to listen. */
  private static Killed killDuringTheCallWithTheDefaults(PipelineStack defaulted) {
    defaulted.keepAlive();
    defaulted.gemini.latencyNext("generateContent", 1, Duration.ofSeconds(3));
    java.time.Instant sent = java.time.Instant.now();
    String key = key(defaulted.upload("crash-defaults/doc.pdf", InvoicePdf.of("defaults"), "application/pdf"));
    Await.until(PER_DOCUMENT, () -> defaulted.gemini.count("generateContent") > 0, "the Gemini call of " + key);
    dev.once.local.invoker.FunctionProcess holder = defaulted.function("DocumentUploaded");
    holder.kill();
    Await.until(PER_DOCUMENT, () -> defaulted.function("DocumentUploaded") != holder, "the killed holder replaced");
    return new Killed(key, sent);
  }

  private static void assertTakenOverWithTheDefaults(PipelineStack defaulted, Killed killed) {
    Await.until(DEFAULT_RECOVERY_BOUND.plusSeconds(60), () -> defaulted.notifiedWith(killed.key()).size() == 1,
        "the notification of " + killed.key());
    assertRecovered(defaulted, "during-gemini, with the defaults", killed.key(), killed.sent(), "analyse",
        DEFAULT_RECOVERY_BOUND);
    defaulted.assertAnalysedBilledAndPublishedOnce(List.of(killed.key()));
  }

  private static String upload(String folder, int i) {
    return key(stack.upload(String.format("%s/doc-%02d.pdf", folder, i), InvoicePdf.of(folder + "-" + i),
        "application/pdf"));
  }

  private static String effectOf(String point) {
    return point.endsWith(":publish") ? "publish" : "analyse";
  }

  /**
   * Prints the time from the kill (the watchdog finding the process dead) to the killed effect's completion, and
   * bounds it.
   */
  private static void assertRecovered(String point, String key, java.time.Instant sent, String effect, Duration bound) {
    assertRecovered(stack, point, key, sent, effect, bound);
  }

  private static void assertRecovered(PipelineStack stack, String point, String key, java.time.Instant sent,
      String effect, Duration bound) {
    dev.once.ledger.Ledger ledger = new dev.once.firestore.FirestoreLedger(stack.db, dev.once.ledger.LedgerOptions.defaults());
    java.time.Instant killed = Await.value(PER_DOCUMENT, () -> stack.lastDeath("DocumentUploaded")
        .filter(death -> death.isAfter(sent)), "the kill of " + key + " to be seen");
    Await.until(bound.plus(PER_DOCUMENT), () -> ledger.lookup(dev.once.key.IdempotencyKey.of(key), effect)
        .map(r -> r.state() == dev.once.ledger.RecordState.DONE).orElse(false), effect + " of " + key + " done");
    Duration recovery = Duration.between(killed, java.time.Instant.now()); // notified already: the document is finished
    RECOVERY.record(point, recovery);
    System.out.printf("killed %-26s %s recovered %5.1f s after the kill%n", point, key, recovery.toMillis() / 1000.0);
    assertTrue(recovery.compareTo(bound) <= 0, key + " recovered in " + recovery + ", over " + bound);
  }
}
