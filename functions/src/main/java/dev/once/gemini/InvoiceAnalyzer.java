package dev.once.gemini;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.types.GenerateContentResponse;
import java.util.Map;

/** The paid call of the sync mode: one generateContent per document, answered in the invoice schema. */
public final class InvoiceAnalyzer {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Client client;
  private final String model;

  public InvoiceAnalyzer(Client client, String model) {
    this.client = client;
    this.model = model;
  }

  /**
   * One paid call, never repeated by the SDK (the ledger records each try before it is made). Throws what the SDK
   * throws; {@link GeminiErrors} tells the document's fault from a refusal and from a failure that may have been billed.
   */
  public Analysis analyse(byte[] document, String mimeType) {
    GenerateContentResponse response = client.models.generateContent(model, InvoicePrompt.content(document, mimeType),
        InvoicePrompt.config().httpOptions(GeminiClients.noRetries()).build());
    return interpret(response.modelVersion().orElse(model), response);
  }

  /**
   * The answer as Firestore can store it: Firestore has no type for integers beyond 64 bits, which Jackson reads
   * as BigInteger (a hostile invoice's total of 10^30, say). Such numbers become doubles, so the analysis is
   * recorded instead of failing its commit on every retry.
   */
  @SuppressWarnings("unchecked")
  static <T> T storable(T value) {
    if (value instanceof java.math.BigInteger big) {
      return (T) (Object) big.doubleValue();
    }
    if (value instanceof java.math.BigDecimal decimal) {
      return (T) (Object) decimal.doubleValue();
    }
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> copy = new java.util.LinkedHashMap<>();
      map.forEach((k, v) -> copy.put(String.valueOf(k), storable(v)));
      return (T) copy;
    }
    if (value instanceof java.util.List<?> list) {
      return (T) list.stream().map(InvoiceAnalyzer::storable).collect(java.util.stream.Collectors.toList());
    }
    return value;
  }

  /**
   * Reads an answer, from generateContent or from a batch result. An answer without usable JSON still used
   * tokens: it becomes a failed analysis, billed, rather than a retry that would be billed again.
   */
  public static Analysis interpret(String model, GenerateContentResponse response) {
    Usage usage = Usage.of(response);
    String text;
    try {
      text = response.text();
    } catch (RuntimeException e) {
      text = null;
    }
    if (text == null || text.isBlank()) {
      String reason = response.promptFeedback().flatMap(f -> f.blockReason()).map(Object::toString)
          .map(r -> "blocked: " + r).orElse("the model returned no text");
      return new Analysis(model, Map.of(), reason, usage);
    }
    try {
      Object parsed = JSON.readValue(text, Object.class);
      if (parsed instanceof Map<?, ?>) {
        Map<String, Object> invoice = JSON.convertValue(parsed, new TypeReference<Map<String, Object>>() {});
        return new Analysis(model, storable(invoice), null, usage);
      }
      return new Analysis(model, Map.of(), "the model's answer is JSON but not an object", usage);
    } catch (JsonProcessingException e) {
      return new Analysis(model, Map.of(), "the model's answer is not JSON: " + e.getOriginalMessage(), usage);
    }
  }
}
