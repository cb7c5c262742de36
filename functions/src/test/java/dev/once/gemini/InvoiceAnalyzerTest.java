package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import dev.once.local.gemini.GeminiFixtures;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Answers as Google sends them (captured bodies), and requests as Gemini 3 wants them. */
class InvoiceAnalyzerTest {
  private static final Instant AT = Instant.parse("2026-12-06T20:00:00Z");

  @Test
  void thinkingTokens_areOutput_billedAsSuch() {
    GenerateContentResponse response =
        GenerateContentResponse.fromJson(GeminiFixtures.text("generate-3.8-flash-thinking-usage.json"));
    Analysis analysis = InvoiceAnalyzer.interpret("gemini-3.8-flash", response, AT);
    assertEquals(new Usage(6, 98, 104, 97), analysis.usage(), "1 token of answer and 97 of thinking");
    assertEquals(Math.round(6 * 0.75 + 98 * 3.75),
        PriceTable.builtIn().costMicroUsd(analysis.model(), analysis.usage(), false, AT).orElseThrow());
    assertFalse(analysis.rerouted());
    assertEquals(AT, analysis.answeredAt());
  }

  @Test
  void anAnswerCutAtMaxOutputTokens_isAFailedAnalysis_thatSaysSo() {
    GenerateContentResponse empty =
        GenerateContentResponse.fromJson(GeminiFixtures.text("generate-max-tokens-empty-3.5-flash-lite.json"));
    Analysis analysis = InvoiceAnalyzer.interpret("gemini-3.5-flash-lite", empty, AT);
    assertFalse(analysis.succeeded());
    assertTrue(analysis.failure().startsWith("answer cut at maxOutputTokens"), analysis.failure());
    assertEquals(new Usage(13, 0, 13, 0), analysis.usage(), "zero counts left out by Google: read as 0");

    GenerateContentResponse cutJson =
        GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
            + "\"{\\\"supplier\\\": \\\"Acme\"}]},\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":"
            + "560,\"candidatesTokenCount\":8,\"thoughtsTokenCount\":16376,\"totalTokenCount\":16944},"
            + "\"modelVersion\":\"gemini-3.8-flash\"}");
    Analysis cut = InvoiceAnalyzer.interpret("gemini-3.8-flash", cutJson, AT);
    assertFalse(cut.succeeded());
    assertEquals("answer cut at maxOutputTokens (" + InvoicePrompt.MAX_OUTPUT_TOKENS + "): 16384 output tokens,"
        + " 16376 of them thinking", cut.failure());
  }

  @Test
  void theModelThatAnswered_isTheOneBilled_andAReroutedAnswerSaysSo() {
    GenerateContentResponse response = GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":"
        + "[{\"text\":\"{}\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1000000,"
        + "\"candidatesTokenCount\":1000000},\"modelVersion\":\"gemini-3.6-flash\"}");
    Analysis analysis = InvoiceAnalyzer.interpret("gemini-3.5-flash", response, AT);
    assertEquals("gemini-3.6-flash", analysis.model());
    assertEquals("gemini-3.5-flash", analysis.requestedModel());
    assertTrue(analysis.rerouted());
    assertEquals(4_500_000L, PriceTable.builtIn().costMicroUsd(analysis.model(), analysis.usage(), false, AT)
        .orElseThrow(), "billed at 3.6 Flash's 0.75/3.75, not 3.5 Flash's 1.50/9.00");

    GenerateContentResponse hostile = GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":"
        + "[{\"text\":\"{}\"}]}}],\"modelVersion\":\"" + "x".repeat(5000) + "\"}");
    assertEquals(InvoiceAnalyzer.MAX_MODEL_CHARS, InvoiceAnalyzer.interpret("m", hostile, AT).model().length());
  }

  @Test
  void aRequest_isShapedForGemini3_noSampling_theCatalogsThinkingLevel_pdfsAtMediumResolution() {
    GenerateContentConfig flash = InvoicePrompt.config("gemini-3.8-flash").build();
    assertTrue(flash.temperature().isEmpty() && flash.topP().isEmpty() && flash.topK().isEmpty());
    assertEquals("LOW", flash.thinkingConfig().orElseThrow().thinkingLevel().orElseThrow().toString(),
        "3.8 Flash refuses minimal");
    assertEquals("MEDIA_RESOLUTION_MEDIUM", flash.mediaResolution().orElseThrow().toString());
    assertEquals(InvoicePrompt.MAX_OUTPUT_TOKENS, flash.maxOutputTokens().orElseThrow());
    assertEquals("MINIMAL", InvoicePrompt.config("gemini-3.5-flash-lite").build().thinkingConfig().orElseThrow()
        .thinkingLevel().orElseThrow().toString());
    assertTrue(InvoicePrompt.config("gemini-2.5-flash-lite").build().thinkingConfig().isEmpty(), "2.x: by budget");
    assertTrue(InvoicePrompt.config("gemini-4-flash").build().thinkingConfig().isEmpty(), "unknown: its default");
  }
}
