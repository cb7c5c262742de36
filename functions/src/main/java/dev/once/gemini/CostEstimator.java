package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.types.CountTokensResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * An upper bound on what one invoice analysis of a document can cost, before it is made: what the spending guard
 * reserves. Input: the exact prompt tokens of the request's contents (document and instruction), from Gemini's
 * {@code countTokens} — free, and the same count generateContent bills — plus the response schema, which Gemini adds
 * to the prompt and {@code countTokens} cannot be given on the Developer API (the SDK refuses a generation config
 * there), bounded by its size in UTF-8 bytes (a token covers at least one byte of text). Output: the request's
 * {@link InvoicePrompt#MAX_OUTPUT_TOKENS}, thinking included. Priced by the same table as the bill, with its
 * long-context tier and the batch discount, so the bill of the call it reserves for never exceeds it. In practice it
 * is far above the bill (a one-page invoice: ~21,000 µUSD reserved for ~320 µUSD billed on gemini-2.5-flash), and
 * settling gives the difference back at once.
 *
 * <p>{@link #ceiling} bounds any call without asking Gemini: a prompt cannot exceed the model's input token limit (a
 * longer one is refused, unbilled). Far looser, it spares the countTokens call (a round trip, and the document sent
 * once more) while the day's budget is far from its edge, where a loose reservation costs nothing.
 */
public final class CostEstimator {
  /** The response schema's JSON size: at least as many bytes as it has tokens. */
  static final long SCHEMA_TOKEN_BOUND = InvoiceSchema.SCHEMA.toJson().getBytes(StandardCharsets.UTF_8).length;
  /** The input token limit of the Gemini 2.0 and 2.5 models (Gemini API docs, "Models"); others are not assumed. */
  static final long GEMINI_2_INPUT_TOKEN_LIMIT = 1_048_576;
  /**
   * The models known to have that limit, by exact name: a prefix would take in others with a larger window
   * ({@code gemini-2.0-pro-exp-02-05} has 2,097,152), whose ceiling would then be too low.
   */
  static final Set<String> GEMINI_2_MODELS = Set.of("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
      "gemini-2.0-flash", "gemini-2.0-flash-lite");

  private final Client client;
  private final String model;
  private final PriceTable prices;

  public CostEstimator(Client client, String model, PriceTable prices) {
    this.client = client;
    this.model = model;
    this.prices = prices;
  }

  /** One countTokens call (free; the SDK may retry it, it bills nothing). Throws what the SDK throws. */
  public long microUsd(byte[] document, String mimeType, boolean batch) {
    CountTokensResponse counted = client.models.countTokens(model, List.of(InvoicePrompt.content(document, mimeType)),
        null);
    long promptTokens = counted.totalTokens().orElseThrow(
        () -> new IllegalStateException("Gemini's countTokens answered no totalTokens")) + SCHEMA_TOKEN_BOUND;
    return bound(prices, model, promptTokens, batch);
  }

  /** The most any call can cost (no call made), or empty when the model's input token limit is not known here. */
  public OptionalLong ceiling(boolean batch) {
    if (!GEMINI_2_MODELS.contains(model)) {
      return OptionalLong.empty();
    }
    // The schema on top, as for a counted prompt, in case the window does not include it.
    return OptionalLong.of(bound(prices, model, GEMINI_2_INPUT_TOKEN_LIMIT + SCHEMA_TOKEN_BOUND, batch));
  }

  /** The price of {@code promptTokens} in and the most an answer may use out, for {@code model}. */
  static long bound(PriceTable prices, String model, long promptTokens, boolean batch) {
    Usage worst = new Usage(promptTokens, InvoicePrompt.MAX_OUTPUT_TOKENS, promptTokens + InvoicePrompt.MAX_OUTPUT_TOKENS);
    return prices.costMicroUsd(model, worst, batch).orElseThrow(() -> new IllegalStateException(
        "no price for " + model + ": the spending guard cannot bound its calls (add it to GEMINI_PRICES)"));
  }
}
