package dev.once.gemini;

import java.util.Map;

/**
 * What Gemini made of one document: the invoice fields, or why there are none. Either way the call consumed
 * tokens, so {@code usage} is billed.
 *
 * @param invoice the fields, following {@link InvoiceSchema}; empty when {@code failure} is set
 * @param failure why the answer holds no usable invoice (blocked, not JSON), or null
 */
public record Analysis(String model, Map<String, Object> invoice, String failure, Usage usage) {
  public boolean succeeded() {
    return failure == null;
  }
}
