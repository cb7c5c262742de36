package dev.once.gemini;

import com.google.genai.types.Content;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.MediaResolution;
import com.google.genai.types.Part;
import com.google.genai.types.Schema;
import com.google.genai.types.ThinkingConfig;
import com.google.genai.types.ThinkingLevel;

/**
 * One document as a Gemini request: the document inline, the instruction, and the invoice response schema. A batch
 * request adds the document's reference ({@link #batchContent}): the model copies it into its answer
 * ({@link InvoiceSchema#REFERENCE}), so an answer shows which document it was generated for, whatever key or position
 * the job files it under.
 */
public final class InvoicePrompt {
  static final String INSTRUCTION = "Extract the invoice in this document. Answer with JSON only, following the"
      + " schema; use null for a field the document does not state; dates as YYYY-MM-DD; amounts as numbers"
      + " without currency symbols.";

  /** The longest invoice JSON an answer may hold: hundreds of line items, far beyond a usual invoice's few hundred. */
  static final int MAX_ANSWER_TOKENS = 8192;
  /**
   * Room for thinking before the answer, at the low levels {@link GeminiModels} sends (Gemini 3 thinking cannot be
   * turned off; a 3.6 Flash invoice thinks ~1,000 tokens at its default, medium).
   */
  static final int THINKING_TOKENS = 8192;
  /**
   * The most an answer may use, thinking included: Gemini counts thinking tokens against maxOutputTokens (an answer
   * that thinks past it comes back MAX_TOKENS with its JSON cut: googleapis/python-genai#2062, #811) and bills them as
   * output. This bounds what one call can cost, which the spending guard reserves.
   */
  public static final int MAX_OUTPUT_TOKENS = MAX_ANSWER_TOKENS + THINKING_TOKENS;

  private InvoicePrompt() {}

  public static Content content(byte[] document, String mimeType) {
    return Content.builder()
        .role("user")
        .parts(Part.fromBytes(document, mimeType), Part.fromText(INSTRUCTION))
        .build();
  }

  /**
   * A batch job's request for one document: the document, the instruction, and the order to copy its reference, in a
   * sentence of its own ("Set documentReference to "…" exactly.").
   */
  public static Content batchContent(byte[] document, String mimeType, String reference) {
    return Content.builder()
        .role("user")
        .parts(Part.fromBytes(document, mimeType), Part.fromText(INSTRUCTION),
            Part.fromText(referenceInstruction(reference)))
        .build();
  }

  static String referenceInstruction(String reference) {
    return "Set " + InvoiceSchema.REFERENCE + " to \"" + reference + "\" exactly.";
  }

  /** A sync request's configuration for {@code model}. */
  public static GenerateContentConfig.Builder config(String model) {
    return config(InvoiceSchema.SCHEMA, model);
  }

  /** A batch request's configuration: the schema whose first property is the document's reference. */
  public static GenerateContentConfig.Builder batchConfig(String model) {
    return config(InvoiceSchema.REFERENCED, model);
  }

  /**
   * Shaped for Gemini 3: no sampling parameters (temperature, top_p, top_k are deprecated and ignored, and Google says
   * later models refuse them), the thinking level the catalog gives the model (none for a model it does not know: the
   * model's own default), and PDFs at medium resolution (560 tokens a page; "for PDFs quality saturates at medium").
   */
  private static GenerateContentConfig.Builder config(Schema schema, String model) {
    GenerateContentConfig.Builder config = GenerateContentConfig.builder()
        .responseMimeType("application/json")
        .responseSchema(schema)
        .maxOutputTokens(MAX_OUTPUT_TOKENS)
        .mediaResolution(new MediaResolution(MediaResolution.Known.MEDIA_RESOLUTION_MEDIUM));
    GeminiModels.builtIn().find(model).map(GeminiModel::thinkingLevel).ifPresent(
        level -> config.thinkingConfig(ThinkingConfig.builder().thinkingLevel(new ThinkingLevel(level)).build()));
    return config;
  }
}
