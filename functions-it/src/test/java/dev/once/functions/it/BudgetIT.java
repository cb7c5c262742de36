package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.storage.Blob;
import com.google.genai.Client;
import dev.once.config.Settings;
import dev.once.gemini.Analysis;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.GeminiClients;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.gemini.ModelWatch;
import dev.once.gemini.PriceTable;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.eventarc.DeliveryResult;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.RetryPolicy;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.wire.eventarc.CloudEvent;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The spending guard end to end, the four functions under the invoker: a day's budget for about ten documents,
 * fifty uploaded at once with every finalize notified twice. Spend stays within the budget, every analysed document
 * is billed once, the rest are deferred (not published, not billed). The next day — reached without waiting by
 * judging the day in a zone 26 hours east, still by Firestore's clock — has a fresh budget, which the reconciler
 * spends on the oldest deferred documents; a raised budget lets it resume all the others. Every document is then
 * analysed, billed and published exactly once, and a redelivery of any finalize changes nothing.
 */
class BudgetIT {
  /** Five times what the budget holds: most are deferred, and each day's budget runs out within the storm. */
  private static final int DOCUMENTS = 50;
  private static final Duration DEADLINE = Bounds.PATIENT;
  private static final String MODEL = "gemini-3.5-flash-lite";
  /** UTC−12, then UTC+14: the same instant is a later date there. */
  private static final String WEST = "Etc/GMT+12";
  private static final String EAST = "Etc/GMT-14";
  private static final PriceTable PRICES = PriceTable.fromSettings(Settings.of(Map.of()));
  private static long estimate;
  private static long budget;
  private static PipelineStack stack;

  @BeforeAll
  static void start() {
    // What one invoice of the storm reserves and costs, asked of a stand-in of our own (same answers as the stack's).
    try (GeminiStandIn gemini = GeminiStandIn.start();
        Client client = GeminiClients.create(Settings.of(Map.of("GEMINI_API_KEY", "k", "GEMINI_BASE_URL",
            gemini.baseUrl(), "GEMINI_TIMEOUT_SECONDS", "10")))) {
      byte[] sample = InvoicePdf.of("B-000");
      ModelWatch watch = new ModelWatch(Log.stdout());
      estimate = new CostEstimator(client, MODEL, PRICES, watch, InstantSource.system())
          .microUsd(sample, "application/pdf", false);
      Analysis analysis = new InvoiceAnalyzer(client, MODEL, watch, InstantSource.system())
          .analyse(sample, "application/pdf");
      long cost = PRICES.costMicroUsd(analysis.model(), analysis.usage(), false, analysis.answeredAt()).orElseThrow();
      // Room for one reservation beyond what about ten documents cost: a document passes while spent + its
      // estimate fit.
      budget = estimate + 10 * cost;
    }
    // Redelivered up to 30 times, as the deployment's trigger subscriptions are (max_delivery_attempts): a storm of
    // fifty documents on one instance keeps duplicates in flight longer than ten quick tries. Backing off up to 10 s,
    // as Pub/Sub's retry policy does: 30 tries at most 2 s apart were under a minute of patience, and the test asserts
    // that none is given up while a loaded machine holds a claim for longer.
    stack = PipelineStack.start(new PipelineStack.Config("sync", 20,
        RetryPolicy.defaults().withBackoff(Duration.ofMillis(200), Duration.ofSeconds(10)).withMaxAttempts(30),
        Map.of("GEMINI_DAILY_BUDGET_USD", usd(budget), "ONCE_BUDGET_TIMEZONE", WEST)).withReconciler());
  }

  @AfterAll
  static void stop() {
    if (stack != null) {
      stack.close();
    }
  }

  private static String usd(long microUsd) {
    return BigDecimal.valueOf(microUsd).movePointLeft(6).toPlainString();
  }

  @Test
  void aStormOverBudget_defersTheRest_whichTheNextDayAndARaisedBudgetAnalyseExactlyOnce() throws Exception {
    long geminiBefore = stack.gemini.count("generateContent");
    List<String> keys = uploadInAStorm();
    Await.until(DEADLINE, () -> stack.relayIdle() && everyDocumentHasAnAnalysis(keys),
        "every delivery handled and every document analysed or deferred");
    assertEquals(0, stack.relay.gaveUp(), "every delivery acknowledged, the deferred ones included");

    // Day one: within the budget, each analysed document billed once, the rest deferred and not published.
    Map<String, String> status = statuses(keys);
    Set<String> analysed = keysWith(status, "analysed");
    Set<String> deferred = keysWith(status, "deferred");
    assertEquals(DOCUMENTS, analysed.size() + deferred.size(), "analysed or deferred: " + status.values());
    assertTrue(analysed.size() >= 2 && deferred.size() >= DOCUMENTS / 2,
        "about ten analysed (" + analysed.size() + "), the rest deferred");
    long dayOne = assertBilledOnce(analysed);
    assertTrue(dayOne <= budget, "day one spent " + dayOne + " µUSD of " + budget);
    Counters first = counters();
    assertEquals(dayOne, first.spent(), "the counters hold the bills: " + first);
    assertEquals(0, first.reserved(), "every reservation settled or released");
    assertEquals(analysed.size(), stack.gemini.count("generateContent") - geminiBefore,
        "one call per analysed document");
    Await.until(DEADLINE, () -> publishedKeys().equals(analysed), "the analysed documents' results");
    List<String> deferredOldestFirst = deferredOldestFirst(deferred);

    // Day two: a fresh budget, spent by the reconciler on the oldest deferred documents.
    stack.restartWithEnv("GeminiReconciler", Map.of("ONCE_BUDGET_TIMEZONE", EAST));
    JsonNode dayTwoRun = stack.reconcile();
    int resumed = dayTwoRun.path("deferred_resumed").asInt();
    assertTrue(resumed >= 2, "the new day's budget resumed some: " + dayTwoRun);
    Map<String, String> afterDayTwo = statuses(keys);
    Set<String> analysedDayTwo = keysWith(afterDayTwo, "analysed");
    analysedDayTwo.removeAll(analysed);
    assertEquals(resumed, analysedDayTwo.size(), dayTwoRun.toString());
    assertEquals(Set.copyOf(deferredOldestFirst.subList(0, resumed)), analysedDayTwo, "oldest first");
    Counters second = counters();
    long dayTwo = second.spent() - first.spent();
    assertTrue(dayTwo <= budget, "day two spent " + dayTwo + " µUSD of " + budget);
    assertEquals(dayOne + dayTwo, assertBilledOnce(keysWith(afterDayTwo, "analysed")));

    // A raised budget: the reconciler resumes every document still deferred.
    stack.restartWithEnv("GeminiReconciler", Map.of("ONCE_BUDGET_TIMEZONE", EAST, "GEMINI_DAILY_BUDGET_USD", "100"));
    JsonNode raisedRun = stack.reconcile();
    assertEquals(DOCUMENTS - analysed.size() - resumed, raisedRun.path("deferred_resumed").asInt(),
        raisedRun.toString());

    // Every document analysed, billed and published exactly once; duplicates change nothing.
    Set<String> all = Set.copyOf(keys);
    assertEquals(all, keysWith(statuses(keys), "analysed"));
    long total = assertBilledOnce(all);
    assertEquals(new Counters(total, 0), counters(), "the counters of both days hold every bill, and only those");
    assertEquals(DOCUMENTS, stack.gemini.count("generateContent") - geminiBefore, "one Gemini call per document");
    Await.until(DEADLINE, () -> publishedKeys().equals(all), "every result");
    redeliverEveryFinalize(keys);
    assertEquals(DOCUMENTS, stack.gemini.count("generateContent") - geminiBefore, "redeliveries call nothing");
    assertEquals(total, assertBilledOnce(all));
    assertEquals(DOCUMENTS, stack.published().stream()
        .filter(m -> all.contains(m.getAttributesMap().get("idempotency_key"))).count(), "each published once");
  }

  /** The storm's documents uploaded from eight threads at once, the bucket notifying each twice (two event ids). */
  private static List<String> uploadInAStorm() throws Exception {
    List<String> keys = Collections.synchronizedList(new ArrayList<>());
    stack.storage.notifyTwice(true);
    ExecutorService uploaders = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> uploads = new ArrayList<>();
      for (int i = 0; i < DOCUMENTS; i++) {
        String number = String.format("B-%03d", i);
        uploads.add(uploaders.submit(() -> {
          Blob blob = stack.upload("budget/" + number + ".pdf", InvoicePdf.of(number), "application/pdf");
          keys.add(PipelineStack.key(blob));
        }));
      }
      for (Future<?> upload : uploads) {
        upload.get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS);
      }
    } finally {
      uploaders.shutdownNow();
      stack.storage.notifyTwice(false);
    }
    return List.copyOf(keys);
  }

  private static void redeliverEveryFinalize(List<String> keys) throws Exception {
    List<CompletableFuture<DeliveryResult.Outcome>> again = new ArrayList<>();
    for (CloudEvent event : stack.relay.events()) {
      if (event.type().equals(CloudEvent.STORAGE_FINALIZED) && event.dataText().contains("budget/B-")) {
        again.add(stack.relay.redeliver(event.id()).orElseThrow());
      }
    }
    assertEquals(2 * keys.size(), again.size(), "two finalize events per document");
    for (CompletableFuture<DeliveryResult.Outcome> outcome : again) {
      assertEquals(DeliveryResult.Outcome.DELIVERED, outcome.get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS));
    }
  }

  private static boolean everyDocumentHasAnAnalysis(List<String> keys) {
    Map<String, String> status = statuses(keys);
    return status.size() == keys.size() && !status.containsValue("submitted") && !status.containsValue(null);
  }

  /** Each document's analysis status, by key; exactly one analysis per document. */
  private static Map<String, String> statuses(List<String> keys) {
    Set<String> wanted = Set.copyOf(keys);
    Map<String, String> status = new HashMap<>();
    for (QueryDocumentSnapshot analysis : stack.documents("analyses")) {
      String key = analysis.getString("key");
      if (wanted.contains(key)) {
        assertTrue(status.put(key, analysis.getString("status")) == null, "one analysis of " + key);
      }
    }
    return status;
  }

  private static Set<String> keysWith(Map<String, String> status, String wanted) {
    return status.entrySet().stream().filter(e -> wanted.equals(e.getValue())).map(Map.Entry::getKey)
        .collect(Collectors.toCollection(HashSet::new));
  }

  /** One bill per document of {@code billed}, none for the storm's others; what they cost together. */
  private static long assertBilledOnce(Set<String> billed) {
    long total = 0;
    Map<String, Long> bills = new HashMap<>();
    for (QueryDocumentSnapshot bill : stack.documents("billing")) {
      String key = bill.getString("key");
      if (key != null && key.contains("/budget/B-")) {
        assertTrue(bills.put(key, bill.getLong("costMicroUsd")) == null, "one bill of " + key);
        total += bill.getLong("costMicroUsd");
      }
    }
    assertEquals(billed, bills.keySet(), "billed: exactly the analysed documents");
    return total;
  }

  private static List<String> deferredOldestFirst(Set<String> deferred) {
    List<QueryDocumentSnapshot> waiting = new ArrayList<>();
    for (QueryDocumentSnapshot analysis : stack.documents("analyses")) {
      if (deferred.contains(analysis.getString("key"))) {
        waiting.add(analysis);
      }
    }
    // As the reconciler's query orders them: by deferredAt, then by document id.
    waiting.sort(Comparator.comparing((QueryDocumentSnapshot a) -> a.getTimestamp("deferredAt"))
        .thenComparing(QueryDocumentSnapshot::getId));
    assertTrue(waiting.stream().map(a -> a.getTimestamp("deferredAt")).allMatch(t -> t instanceof Timestamp));
    return waiting.stream().map(a -> a.getString("key")).toList();
  }

  private static Set<String> publishedKeys() {
    return stack.published().stream().map(m -> m.getAttributesMap().get("idempotency_key"))
        .filter(key -> key != null && key.contains("/budget/B-")).collect(Collectors.toSet());
  }

  /** What the budget counters of this stack hold, every day together. */
  private record Counters(long spent, long reserved) {}

  private static Counters counters() {
    long spent = 0;
    long reserved = 0;
    for (QueryDocumentSnapshot counter : stack.documents("budget")) {
      if (!counter.contains("reservedMicroUsd")) {
        continue; // the marker of a reservation's (or a step-back's) commit, beside the counters
      }
      spent += counter.getLong("spentMicroUsd");
      reserved += counter.getLong("reservedMicroUsd");
    }
    return new Counters(spent, reserved);
  }
}
