package dev.once.gemini;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.types.Candidate;
import com.google.genai.types.FinishReason;
import com.google.genai.types.GenerateContentResponse;
import dev.once.observe.ForeignText;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The paid call of the sync mode: one generateContent per document, answered in the invoice schema. */
public final class InvoiceAnalyzer {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** The most of an answer's {@code modelVersion} kept: a model's name, whatever answered in Google's place. */
  static final int MAX_MODEL_CHARS = 100;

  private final Client client;
  private final String model;
  private final ModelWatch watch;
  private final InstantSource clock;

  public InvoiceAnalyzer(Client client, String model, ModelWatch watch, InstantSource clock) {
    this.client = client;
    this.model = model;
    this.watch = watch;
    this.clock = clock;
  }

  /**
   * One paid call, never repeated by the SDK (the ledger records each try before it is made). Throws what the SDK
   * throws; {@link GeminiErrors} tells the document's fault from a refusal and from a failure that may have been billed.
   * Billed on the day this instance saw the answer come (within the call's timeout of Google's own).
   */
  public Analysis analyse(byte[] document, String mimeType) {
    GenerateContentResponse response;
    try {
      response = client.models.generateContent(model, InvoicePrompt.content(document, mimeType),
          InvoicePrompt.config(model).httpOptions(GeminiClients.noRetries()).build());
    } catch (RuntimeException e) {
      throw watch.failed(model, e);
    }
    Analysis analysis = interpret(model, response, clock.instant());
    watch.answered(analysis);
    return analysis;
  }

  /**
   * The answer as Firestore can store it: Firestore has no type for integers beyond 64 bits, which Jackson reads
   * as BigInteger (a hostile invoice's total of 10^30, say). Such numbers become doubles, so the analysis is
   * recorded instead of failing its commit on every retry.
   */
  static Map<String, Object> storable(Map<?, ?> fields) {
    Map<String, Object> copy = new LinkedHashMap<>();
    fields.forEach((k, v) -> copy.put(String.valueOf(k), storableValue(v)));
    return copy;
  }

  private static Object storableValue(Object value) {
    return switch (value) {
      case BigInteger big -> big.doubleValue();
      case BigDecimal decimal -> decimal.doubleValue();
      case Map<?, ?> map -> storable(map);
      case List<?> list -> list.stream().map(InvoiceAnalyzer::storableValue).toList();
      case null, default -> value;
    };
  }

  /**
   * Reads an answer, from generateContent or from a batch result, to a request for {@code requestedModel}, answered
   * at {@code answeredAt} (null: unknown). An answer without usable JSON still used tokens: it becomes a failed
   * analysis, billed, rather than a retry that would be billed again — one cut at maxOutputTokens (its thinking and
   * its JSON together past the bound) says so, and can be run again on purpose (once invalidate).
   */
  public static Analysis interpret(String requestedModel, GenerateContentResponse response, Instant answeredAt) {
    String model = answeringModel(requestedModel, response);
    Usage usage = Usage.of(response);
    String text;
    try {
      text = response.text();
    } catch (RuntimeException e) {
      text = null;
    }
    Optional<String> cut = cutAtMaxTokens(response, usage);
    if (text == null || text.isBlank()) {
      String reason = cut.orElseGet(() -> response.promptFeedback().flatMap(f -> f.blockReason()).map(Object::toString)
          .map(r -> "blocked: " + r).orElse("the model returned no text"));
      return new Analysis(requestedModel, model, Map.of(), reason, usage, answeredAt);
    }
    try {
      Object parsed = JSON.readValue(text, Object.class);
      if (parsed instanceof Map<?, ?> invoice) {
        InvoiceBounds.Bounded bounded = InvoiceBounds.bound(storable(invoice));
        return new Analysis(requestedModel, model, bounded.invoice(), null, usage, answeredAt, bounded.truncated());
      }
      return new Analysis(requestedModel, model, Map.of(), cut.orElse("the model's answer is JSON but not an object"),
          usage, answeredAt);
    } catch (JsonProcessingException e) {
      return new Analysis(requestedModel, model, Map.of(),
          cut.orElse(ForeignText.cut("the model's answer is not JSON: " + e.getOriginalMessage(),
              InvoiceBounds.MAX_TEXT_CHARS)),
          usage, answeredAt);
    }
  }

  /** The model that answered ({@code modelVersion}, kept short), else the one asked for. */
  static String answeringModel(String requestedModel, GenerateContentResponse response) {
    return response.modelVersion().map(String::strip).filter(v -> !v.isEmpty())
        .map(v -> v.length() <= MAX_MODEL_CHARS ? v : v.substring(0, MAX_MODEL_CHARS))
        .orElse(requestedModel);
  }

  /** "answer cut at maxOutputTokens…" when the answer stopped at its token bound (finishReason MAX_TOKENS). */
  private static Optional<String> cutAtMaxTokens(GenerateContentResponse response, Usage usage) {
    boolean cut = response.candidates().flatMap(candidates -> candidates.stream().findFirst())
        .flatMap(Candidate::finishReason)
        .filter(reason -> reason.knownEnum() == FinishReason.Known.MAX_TOKENS)
        .isPresent();
    return cut ? Optional.of("answer cut at maxOutputTokens (" + InvoicePrompt.MAX_OUTPUT_TOKENS + "): "
        + usage.outputTokens() + " output tokens, " + usage.thoughtsTokens() + " of them thinking") : Optional.empty();
  }
}
