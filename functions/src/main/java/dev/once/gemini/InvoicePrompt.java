package dev.once.gemini;

import com.google.genai.types.Content;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.Part;

/** One document as a Gemini request: the document inline, the instruction, and the invoice response schema. */
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

  public static GenerateContentConfig.Builder config() {
    return GenerateContentConfig.builder()
        .responseMimeType("application/json")
        .responseSchema(InvoiceSchema.SCHEMA)
        .maxOutputTokens(MAX_OUTPUT_TOKENS)
        .temperature(0f);
  }
}
