package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.storage.Blob;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The document flow, killed with SIGKILL at each point of its way (sync mode). Each point gets 20 documents,
 * one at a time so a kill interrupts one event only; every 10th document's process is killed at the point, then
 * replaced (the watchdog), and Eventarc (the relay) redelivers. Whatever the point: every document is analysed
 * and billed exactly once, published at least once (every copy with the document's key), notified once; and
 * Gemini was called at most once per document plus once per kill at or after the call.
 */
class CrashMatrixIT {
  private static final int DOCUMENTS = 20;
  private static final int KILL_EVERY = 10;
  private static final Duration PER_DOCUMENT = Duration.ofSeconds(60);
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // A short lease, so a killed holder's claim is taken over seconds later; a patient relay, as Eventarc is.
    stack = PipelineStack.start(new PipelineStack.Config("sync", 3,
        RetryPolicy.defaults().withMaxAttempts(60).withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1)),
        java.util.Map.of()));
    stack.keepAlive();
  }

  @AfterAll
  static void stop() {
    stack.close();
  }

  @ParameterizedTest(name = "killed {0}")
  @ValueSource(strings = {"after-claim:analyse", "during-gemini", "before-complete:analyse",
      "after-complete:analyse", "before-complete:publish"})
  void everyDocument_isAnalysedBilledAndNotifiedOnce_whateverThePointOfTheKill(String point) throws IOException {
    String folder = "crash-" + point.replace(':', '-');
    Path crashLog = stack.logDir.resolve(folder + ".crashes");
    Files.deleteIfExists(crashLog);
    boolean external = point.equals("during-gemini");
    stack.restart("DocumentUploaded", external ? List.of() : List.of(
        "-Donce.crash.at=" + point,
        "-Donce.crash.keys=gcs:inbox/" + folder + "/doc-(00|10)\\.pdf#\\d+",
        "-Donce.crash.log=" + crashLog.toAbsolutePath()));
    int restartsBefore = stack.restarts("DocumentUploaded");
    long geminiBefore = stack.gemini.count("generateContent");

    List<String> keys = new ArrayList<>();
    int externalKills = 0;
    for (int i = 0; i < DOCUMENTS; i++) {
      String name = String.format("%s/doc-%02d.pdf", folder, i);
      boolean kill = i % KILL_EVERY == 0;
      if (external && kill) {
        stack.gemini.latency(Duration.ofSeconds(3));
      }
      long callsBefore = stack.gemini.count("generateContent");
      Blob blob = stack.upload(name, InvoicePdf.of(folder + "-" + i), "application/pdf");
      String key = key(blob);
      keys.add(key);
      if (external && kill) {
        // The call has reached Gemini and waits for its answer: kill the process now.
        Await.until(PER_DOCUMENT, () -> stack.gemini.count("generateContent") > callsBefore, "the Gemini call of " + key);
        stack.function("DocumentUploaded").kill();
        externalKills++;
        stack.gemini.latency(Duration.ZERO);
      }
      Await.until(PER_DOCUMENT, () -> stack.notifiedWith(key).size() == 1, "the notification of " + key);
    }

    int kills = external ? externalKills : (int) Files.readAllLines(crashLog).stream().filter(l -> !l.isBlank()).count();
    assertEquals(2, kills, "one kill per 10 documents");
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
}
