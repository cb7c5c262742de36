package dev.once.gemini;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What Gemini made of one document: the invoice fields, or why there are none. Either way the call consumed
 * tokens, so {@code usage} is billed: at the prices of {@code model}, the model that answered (its {@code
 * modelVersion}), on the day of {@code answeredAt}.
 *
 * @param requestedModel the model the request named
 * @param model the model that answered: the request's unless Google routed it to another
 * @param invoice the fields, following {@link InvoiceSchema}; empty when {@code failure} is set
 * @param failure why the answer holds no usable invoice (blocked, cut at maxOutputTokens, not JSON), or null
 * @param answeredAt when Gemini answered (a batch job: when it ended); null: unknown, billed at the time of recording
 * @param truncated the invoice's fields cut to our bounds ({@link InvoiceBounds}); empty: none
 */
public record Analysis(String requestedModel, String model, Map<String, Object> invoice, String failure, Usage usage,
    Instant answeredAt, List<String> truncated) {

  public Analysis {
    truncated = truncated == null ? List.of() : List.copyOf(truncated);
  }

  /** An answer nothing of which was cut ({@link InvoiceBounds}). */
  public Analysis(String requestedModel, String model, Map<String, Object> invoice, String failure, Usage usage,
      Instant answeredAt) {
    this(requestedModel, model, invoice, failure, usage, answeredAt, List.of());
  }

  /** An answer of the model it was asked of, at an unknown time. */
  public Analysis(String model, Map<String, Object> invoice, String failure, Usage usage) {
    this(model, model, invoice, failure, usage, null);
  }

  public boolean succeeded() {
    return failure == null;
  }

  /**
   * Google answered with another model than the one asked for (a deprecated model routed to its successor). A
   * versioned answer of the same model ({@code gemini-3.8-flash-001}) is not, nor any answer to a {@code -latest}
   * alias, which names no model of its own.
   */
  public boolean rerouted() {
    String asked = GeminiModels.bare(requestedModel);
    String answered = GeminiModels.bare(model);
    if (asked.endsWith("-latest") || answered.equals(asked)) {
      return false;
    }
    if (!answered.startsWith(asked + "-")) {
      return true;
    }
    // A longer name: a version of the same model, unless the catalog knows it as another (3.5-flash-lite, 3.5-flash).
    GeminiModels catalog = GeminiModels.builtIn();
    return !catalog.find(answered).map(GeminiModel::name).orElse(asked)
        .equals(catalog.find(asked).map(GeminiModel::name).orElse(asked));
  }
}
