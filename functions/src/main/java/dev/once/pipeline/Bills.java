package dev.once.pipeline;

import dev.once.gemini.Analysis;
import dev.once.gemini.PriceTable;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.SideWrites;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The pipeline's bills, {@code billing/{id}}: what Gemini charged for an answer, at the prices of the model that
 * answered on the day it answered. One bill per answer, under an id the answer fixes, so a bill written again
 * overwrites itself and is never added twice: a document's answer ({@code KEY}, {@code KEY/rerun-N} for a later run),
 * an answer billed to it that could not be used ({@code KEY#job}).
 */
final class Bills {
  private final PriceTable prices;
  private final InstantSource clock;
  private final UnaryOperator<Map<String, Object>> expiring;

  /** @param expiring adds the field a TTL policy deletes the bill by, when records are kept for a while only */
  Bills(PriceTable prices, InstantSource clock, UnaryOperator<Map<String, Object>> expiring) {
    this.prices = prices;
    this.clock = clock;
    this.expiring = expiring;
  }

  /** What an answer cost, in millionths of a USD (batch at half price); empty when its model has no price. */
  Optional<Long> costMicroUsd(Analysis analysis, boolean batch) {
    Instant at = analysis.answeredAt() != null ? analysis.answeredAt() : clock.instant();
    return prices.costMicroUsd(analysis.model(), analysis.usage(), batch, at);
  }

  /** The bill of run {@code run} of a document's analysis: {@code billing/{id of KEY}} (of {@code KEY/rerun-N}). */
  SideWrites answered(IdempotencyKey documentKey, Analysis analysis, boolean batch, int run) {
    Map<String, Object> bill = bill(documentKey, analysis, batch);
    if (run > 1) {
      bill.put(Records.RERUN, (long) run);
    }
    expiring.apply(bill);
    return writes -> writes.set(Records.BILLING, documentKey.rerun(run).documentId(), bill);
  }

  /** The bill of an answer billed to the document in {@code job} that could not be used, with why. */
  SideWrites unused(IdempotencyKey documentKey, String reason, String job, Analysis analysis) {
    Map<String, Object> bill = bill(documentKey, analysis, true);
    bill.put("job", job);
    bill.put("unused", true);
    bill.put("reason", Records.bounded(reason));
    expiring.apply(bill);
    String billId = IdempotencyKey.of(documentKey.value() + "#" + job).documentId();
    return writes -> writes.set(Records.BILLING, billId, bill);
  }

  private Map<String, Object> bill(IdempotencyKey documentKey, Analysis analysis, boolean batch) {
    Map<String, Object> bill = new LinkedHashMap<>();
    bill.put("key", documentKey.value());
    bill.put("model", analysis.model());
    rerouting(analysis, bill);
    bill.putAll(usage(analysis));
    Optional<Long> cost = costMicroUsd(analysis, batch);
    bill.put("costMicroUsd", cost.orElse(null));
    bill.put("priced", cost.isPresent());
    bill.put("batch", batch);
    bill.put("billedAt", DocumentWrites.serverTime());
    return bill;
  }

  /** A rerouted answer names the model asked for beside the one that answered (and billed): {@code requestedModel}. */
  static void rerouting(Analysis analysis, Map<String, Object> fields) {
    if (analysis.rerouted()) {
      fields.put("requestedModel", analysis.requestedModel());
      fields.put("rerouted", true);
    }
  }

  /** The tokens an answer took, as its bill and its analysis list them. */
  static Map<String, Object> usage(Analysis analysis) {
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("promptTokens", analysis.usage().promptTokens());
    usage.put("outputTokens", analysis.usage().outputTokens());
    usage.put("totalTokens", analysis.usage().totalTokens());
    usage.put("thoughtsTokens", analysis.usage().thoughtsTokens());
    return usage;
  }
}
