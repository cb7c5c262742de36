package dev.once.gemini;

import com.google.genai.types.Content;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.Part;

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

  /**
   * The most an answer may use, thinking included: Gemini 2.5 models count their thinking tokens against
   * maxOutputTokens (an answer that thinks up to the bound comes back MAX_TOKENS with its thoughts' tokens and no
   * text: googleapis/python-genai#811, langchain-ai/langchain-google#1020) and bill them as output. This bounds what
   * one call can cost, which the spending guard reserves. An invoice's JSON is far shorter; one with hundreds of
   * lines would be cut (a failed analysis, billed, not retried).
   */
  public static final int MAX_OUTPUT_TOKENS = 8192;

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
        .parts(Part.fromBytes(document, mimeType), Part.fromText(INSTRUCTION), Part.fromText(referenceInstruction(reference)))
        .build();
  }

  static String referenceInstruction(String reference) {
    return "Set " + InvoiceSchema.REFERENCE + " to \"" + reference + "\" exactly.";
  }

  public static GenerateContentConfig.Builder config() {
    return config(InvoiceSchema.SCHEMA);
  }

  /** A batch request's configuration: the schema whose first property is the document's reference. */
  public static GenerateContentConfig.Builder batchConfig() {
    return config(InvoiceSchema.REFERENCED);
  }

  private static GenerateContentConfig.Builder config(com.google.genai.types.Schema schema) {
    return GenerateContentConfig.builder()
        .responseMimeType("application/json")
        .responseSchema(schema)
        .maxOutputTokens(MAX_OUTPUT_TOKENS)
        .temperature(0f);
  }
}
