package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static dev.once.functions.it.PipelineStack.withKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.gemini.InvoicePrompt;
import dev.once.gemini.ModelWatch;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.BatchState;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Gemini Google serves in December 2026, through the real functions against the stand-in: the defaults analyse
 * and bill on a current model at the answering model's price (sync and batch); a model Google routes to another is
 * billed as the one that answered, and said once; a price that changes on a date bills each day at its own; a model
 * Google stops serving loses nothing, says so once, and every waiting document is analysed once after the fix; an
 * answer that thinks past its bound is recorded as cut, billed once.
 */
class GeminiModelsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration DEADLINE = Bounds.PATIENT;
  /** What a deployment with no GEMINI_MODEL gets (the catalog's default). */
  private static final String DEFAULT = "gemini-3.5-flash-lite";
  /** 3.6 Flash: 0.75/3.75 USD per million tokens until 2026-12-31, 1.50/7.50 from 2027-01-01 (midnight Pacific Time). */
  private static final Instant PRICE_RISE = Instant.parse("2027-01-01T08:00:00Z");
  private static PipelineStack sync;
  private static PipelineStack batch;

  @BeforeAll
  static void start() {
    sync = PipelineStack.shared(PipelineStack.Config.sync().withReconciler());
    batch = PipelineStack.shared(PipelineStack.Config.sync().batch());
  }

  /** Google as it serves the models, and nothing of a test left in flight for the next one (the stacks are shared). */
  @AfterEach
  void asGoogleServesThem() {
    for (PipelineStack stack : List.of(sync, batch)) {
      stack.gemini.model(DEFAULT, "served", null);
      stack.gemini.thinkingTokens(0);
      stack.gemini.clock(null);
      Await.until(DEADLINE, () -> stack.relay.counters().get("received") == 0 || stack.relayIdle(), "the relay idle");
    }
  }

  private static QueryDocumentSnapshot analysis(PipelineStack stack, String key) {
    List<QueryDocumentSnapshot> analyses = withKey(stack.documents("analyses"), key);
    assertEquals(1, analyses.size(), key);
    return analyses.get(0);
  }

  private static QueryDocumentSnapshot bill(PipelineStack stack, String key) {
    List<QueryDocumentSnapshot> billing = withKey(stack.documents("billing"), key);
    assertEquals(1, billing.size(), "billed " + key + " once");
    return billing.get(0);
  }

  /** The bill's cost, recomputed from its tokens at list prices per million (batch: half). */
  private static void assertPriced(QueryDocumentSnapshot bill, double input, double output, boolean batchJob) {
    long expected = Math.round((bill.getLong("promptTokens") * input + bill.getLong("outputTokens") * output)
        * (batchJob ? 0.5 : 1.0));
    assertEquals(expected, bill.getLong("costMicroUsd"), bill.getData().toString());
    assertEquals(Boolean.TRUE, bill.getBoolean("priced"));
  }

  private static void awaitNotified(PipelineStack stack, String key) {
    Await.until(DEADLINE, () -> stack.notifiedWith(key).size() == 1 && stack.relayIdle(), key + " notified");
  }

  private static String job(PipelineStack stack, String key) {
    return Await.value(DEADLINE, () -> stack.byKey("analyses", key).stream()
        .map(a -> a.getString("job")).filter(j -> j != null).findFirst(), "a batch job for " + key);
  }

  private static List<String> logLines(PipelineStack stack, String function, String message) {
    try {
      return Files.readAllLines(stack.function(function).log()).stream()
          .filter(line -> line.startsWith("{") && line.contains("\"message\":\"" + message + "\"")).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void theDefaults_analyseAndBill_onAModelGoogleServes_atItsPrice_syncAndBatch() {
    assertFalse(sync.environment("DocumentUploaded").containsKey("GEMINI_MODEL"), "the README's defaults");
    String synced = key(sync.upload("models/default.pdf", InvoicePdf.of("M-1"), "application/pdf"));
    String batched = key(batch.upload("models/default.pdf", InvoicePdf.of("M-2"), "application/pdf"));
    awaitNotified(sync, synced);
    assertEquals("analysed", analysis(sync, synced).getString("status"));
    assertEquals(DEFAULT, analysis(sync, synced).getString("model"));
    assertNull(analysis(sync, synced).get("requestedModel"), "answered by the model asked for");
    assertPriced(bill(sync, synced), 0.30, 2.50, false);
    assertTrue(bill(sync, synced).getLong("promptTokens") >= 560, "a PDF page is 560 tokens on Gemini 3");

    batch.gemini.finish(job(batch, batched), BatchState.SUCCEEDED);
    awaitNotified(batch, batched);
    assertEquals("analysed", analysis(batch, batched).getString("status"));
    assertEquals(DEFAULT, bill(batch, batched).getString("model"));
    assertPriced(bill(batch, batched), 0.30, 2.50, true);
  }

  @Test
  void anAnswerFromTheModelGoogleRoutedTo_isBilledAsThatModel_recordedAsRerouted_andSaidOnce() {
    long said = logLines(sync, "DocumentUploaded", ModelWatch.REROUTED).size();
    sync.gemini.model(DEFAULT, "routed", "gemini-3.6-flash");
    List<String> keys = List.of(
        key(sync.upload("models/routed-1.pdf", InvoicePdf.of("R-1"), "application/pdf")),
        key(sync.upload("models/routed-2.pdf", InvoicePdf.of("R-2"), "application/pdf")));
    keys.forEach(key -> awaitNotified(sync, key));

    for (String key : keys) {
      QueryDocumentSnapshot analysis = analysis(sync, key);
      assertEquals("gemini-3.6-flash", analysis.getString("model"));
      assertEquals(DEFAULT, analysis.getString("requestedModel"));
      assertEquals(Boolean.TRUE, analysis.getBoolean("rerouted"));
      QueryDocumentSnapshot bill = bill(sync, key);
      assertEquals("gemini-3.6-flash", bill.getString("model"));
      assertEquals(DEFAULT, bill.getString("requestedModel"));
      boolean risen = !bill.getTimestamp("billedAt").toDate().toInstant().isBefore(PRICE_RISE);
      assertPriced(bill, risen ? 1.50 : 0.75, risen ? 7.50 : 3.75, false);
    }
    List<String> lines = logLines(sync, "DocumentUploaded", ModelWatch.REROUTED);
    assertEquals(said + 1, lines.size(), "said once for the pair: " + lines);
    assertTrue(lines.get(lines.size() - 1).contains("\"answered\":\"gemini-3.6-flash\""), lines.toString());
  }

  /**
   * A batch job's answers are billed on the day it ended, by Google's clock: the stand-in's, which the test sets on
   * either side of the day 3.6 Flash's price doubles.
   */
  @Test
  void aBatchJob_isBilledAtThePriceInForceTheDayItEnded() {
    batch.gemini.model(DEFAULT, "routed", "gemini-3.6-flash");
    batch.gemini.clock(Instant.parse("2026-12-31T20:00:00Z"));
    String before = key(batch.upload("models/eve.pdf", InvoicePdf.of("D-1"), "application/pdf"));
    batch.gemini.finish(job(batch, before), BatchState.SUCCEEDED);
    awaitNotified(batch, before);
    batch.gemini.clock(Instant.parse("2027-01-01T20:00:00Z"));
    String after = key(batch.upload("models/new-year.pdf", InvoicePdf.of("D-2"), "application/pdf"));
    batch.gemini.finish(job(batch, after), BatchState.SUCCEEDED);
    awaitNotified(batch, after);

    assertPriced(bill(batch, before), 0.75, 3.75, true);
    assertPriced(bill(batch, after), 1.50, 7.50, true);
    assertEquals(bill(batch, before).getLong("promptTokens"), bill(batch, after).getLong("promptTokens"));
  }

  /**
   * Google stops serving the model (404 "no longer available"): no document is failed, rejected, billed or published;
   * the deliveries fail so the platform redelivers; one ERROR line names the model and Google's words. Once
   * GEMINI_MODEL names a model Google serves (the function redeployed with it), each waiting document is analysed once.
   */
  @Test
  void aModelGoogleNoLongerServes_losesNothing_saysSoOnce_andEachDocumentIsAnalysedOnceAfterTheFix() {
    long errors = logLines(sync, "DocumentUploaded", ModelWatch.UNAVAILABLE).size();
    long paid = sync.gemini.count("generateContent.carriedOut");
    sync.gemini.model(DEFAULT, "shut-down", null);
    List<String> keys = List.of(
        key(sync.upload("models/outage-1.pdf", InvoicePdf.of("O-1"), "application/pdf")),
        key(sync.upload("models/outage-2.pdf", InvoicePdf.of("O-2"), "application/pdf")));
    Path log = sync.function("DocumentUploaded").log();
    Await.until(DEADLINE, () -> keys.stream().allMatch(key -> EventLines.of(log, 0, "DocumentUploaded").stream()
        .filter(line -> EventLines.isAbout(line, key))
        .filter(line -> "failed".equals(line.path(Log.LABELS).path("outcome").asText()))
        .count() >= 3), "each document delivered three times, each failing so the platform redelivers it");

    assertEquals(paid, sync.gemini.count("generateContent.carriedOut"), "no answer made, none billed");
    for (String key : keys) {
      assertTrue(withKey(sync.documents("analyses"), key).isEmpty(), "nothing recorded against " + key);
      assertTrue(withKey(sync.documents("billing"), key).isEmpty());
      assertTrue(attributed(sync.published(), key).isEmpty());
    }
    List<String> said = logLines(sync, "DocumentUploaded", ModelWatch.UNAVAILABLE);
    assertEquals(errors + 1, said.size(), "one ERROR line: " + said);
    JsonNode line = read(said.get(said.size() - 1));
    assertEquals("ERROR", line.path("severity").asText());
    assertEquals(DEFAULT, line.path("model").asText());
    assertTrue(line.path("error").asText().contains("This model models/" + DEFAULT + " is no longer available"), line
        .toString());

    sync.restartWithEnv("DocumentUploaded", Map.of("GEMINI_MODEL", "gemini-3.6-flash"));
    try {
      keys.forEach(key -> awaitNotified(sync, key));
      for (String key : keys) {
        assertEquals("analysed", analysis(sync, key).getString("status"));
        assertEquals("gemini-3.6-flash", bill(sync, key).getString("model"));
        assertEquals(1, attributed(sync.published(), key).size());
      }
      assertEquals(paid + 2, sync.gemini.count("generateContent.carriedOut"), "one paid call a document");
    } finally {
      sync.restartWithEnv("DocumentUploaded", Map.of());
    }
  }

  @Test
  void anAnswerThatThinksPastMaxOutputTokens_isRecordedAsCut_billedOnce_andPublishedAsFailed() {
    sync.gemini.thinkingTokens(InvoicePrompt.MAX_OUTPUT_TOKENS * 2);
    long paid = sync.gemini.count("generateContent.carriedOut");
    String key = key(sync.upload("models/thinks-long.pdf", InvoicePdf.of("T-1"), "application/pdf"));
    awaitNotified(sync, key);

    QueryDocumentSnapshot analysis = analysis(sync, key);
    assertEquals("failed", analysis.getString("status"));
    assertTrue(
        analysis.getString("reason").startsWith("answer cut at maxOutputTokens (" + InvoicePrompt.MAX_OUTPUT_TOKENS
            + ")"),
        analysis.getString("reason"));
    QueryDocumentSnapshot bill = bill(sync, key);
    assertEquals(InvoicePrompt.MAX_OUTPUT_TOKENS, bill.getLong("outputTokens"));
    assertEquals(InvoicePrompt.MAX_OUTPUT_TOKENS, bill.getLong("thoughtsTokens"));
    assertPriced(bill, 0.30, 2.50, false);
    assertEquals(paid + 1, sync.gemini.count("generateContent.carriedOut"), "billed once, not retried");
    assertEquals("failed", read(new String(attributed(sync.published(), key).get(0).getData().toByteArray(),
        StandardCharsets.UTF_8)).path("status").asText());
  }

  private static JsonNode read(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
