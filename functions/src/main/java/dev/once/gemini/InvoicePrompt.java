package dev.once.gemini;

import com.google.genai.types.Content;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.Part;

/** One document as a Gemini request: the document inline, the instruction, and the invoice response schema. */
public final class InvoicePrompt {
  static final String INSTRUCTION = "Extract the invoice in this document. Answer with JSON only, following the"
      + " schema; use null for a field the document does not state; dates as YYYY-MM-DD; amounts as numbers"
      + " without currency symbols.";

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
        .temperature(0f);
  }
}
