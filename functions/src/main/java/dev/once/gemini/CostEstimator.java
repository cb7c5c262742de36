package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.types.CountTokensResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.OptionalLong;

/**
 * An upper bound on what one invoice analysis of a document can cost, before it is made: what the spending guard
 * reserves. Input: the exact prompt tokens of the request's contents (document and instruction), from Gemini's
 * {@code countTokens} — free, and the same count generateContent bills — plus the response schema, which Gemini adds
 * to the prompt and {@code countTokens} cannot be given on the Developer API (the SDK refuses a generation config
 * there), bounded by its size in UTF-8 bytes (a token covers at least one byte of text). Output: the request's
 * {@link InvoicePrompt#MAX_OUTPUT_TOKENS}, thinking included. Priced by the same table as the bill, with its
 * long-context tier and the batch discount, at the highest price in force over {@link #PRICE_WINDOW} (a price that
 * rises tomorrow bills a batch job ending tomorrow), so the bill of the call it reserves for never exceeds it. In
 * practice it is far above the bill, and settling gives the difference back at once.
 *
 * <p>{@link #ceiling} bounds any call without asking Gemini: a prompt cannot exceed the model's input token limit (a
 * longer one is refused, unbilled), which the catalog gives ({@link GeminiModels}). Far looser, it spares the
 * countTokens call (a round trip, and the document sent once more) while the day's budget is far from its edge, where
 * a loose reservation costs nothing. A model the catalog does not know has no ceiling: every reservation counts.
 */
public final class CostEstimator {
  /** The response schema's JSON size: at least as many bytes as it has tokens. */
  static final long SCHEMA_TOKEN_BOUND = InvoiceSchema.SCHEMA.toJson().getBytes(StandardCharsets.UTF_8).length;
  /**
   * How far ahead a reservation looks for a price change: past the 48 h a batch job may run (Google expires it then)
   * and the wait before it is made.
   */
  static final Duration PRICE_WINDOW = Duration.ofDays(3);

  private final Client client;
  private final String model;
  private final PriceTable prices;
  private final ModelWatch watch;
  private final InstantSource clock;

  public CostEstimator(Client client, String model, PriceTable prices, ModelWatch watch, InstantSource clock) {
    this.client = client;
    this.model = model;
    this.prices = prices;
    this.watch = watch;
    this.clock = clock;
  }

  /** One countTokens call (free; the SDK may retry it, it bills nothing). Throws what the SDK throws. */
  public long microUsd(byte[] document, String mimeType, boolean batch) {
    CountTokensResponse counted;
    try {
      counted = client.models.countTokens(model, List.of(InvoicePrompt.content(document, mimeType)), null);
    } catch (RuntimeException e) {
      throw watch.failed(model, e);
    }
    long promptTokens = counted.totalTokens().orElseThrow(
        () -> new IllegalStateException("Gemini's countTokens answered no totalTokens")) + SCHEMA_TOKEN_BOUND;
    return bound(promptTokens, batch);
  }

  /** The most any call can cost (no call made), or empty when the model's input token limit is not known here. */
  public OptionalLong ceiling(boolean batch) {
    return GeminiModels.builtIn().find(model).filter(known -> known.inputTokenLimit() > 0)
        // The schema on top, as for a counted prompt, in case the window does not include it.
        .map(known -> OptionalLong.of(bound(known.inputTokenLimit() + SCHEMA_TOKEN_BOUND, batch)))
        .orElse(OptionalLong.empty());
  }

  /**
   * The price of {@code promptTokens} in and the most an answer may use out, at the highest price in the window, of the
   * model or of the one Google routes it to (whose prices bill the answer).
   */
  long bound(long promptTokens, boolean batch) {
    Usage worst =
        new Usage(promptTokens, InvoicePrompt.MAX_OUTPUT_TOKENS, promptTokens + InvoicePrompt.MAX_OUTPUT_TOKENS);
    long most = prices.mostMicroUsd(model, worst, batch, clock.instant(), PRICE_WINDOW).orElseThrow(
        () -> new IllegalStateException("no price for " + model
            + ": the spending guard cannot bound its calls (add it to GEMINI_PRICES)"));
    String routedTo = GeminiModels.builtIn().find(model).map(GeminiModel::routedTo).orElse(null);
    return routedTo == null ? most
        : Math.max(most, prices.mostMicroUsd(routedTo, worst, batch, clock.instant(), PRICE_WINDOW).orElse(0L));
  }
}
