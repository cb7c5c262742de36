package dev.once.gemini;

import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;

/**
 * Tokens one Gemini answer consumed. Thinking tokens are billed as output (the pricing page's "Output price (including
 * thinking tokens)"), so {@code outputTokens} counts them, and {@code thoughtsTokens} says how many of them they are.
 */
public record Usage(long promptTokens, long outputTokens, long totalTokens, long thoughtsTokens) {
  public static final Usage NONE = new Usage(0, 0, 0, 0);

  public Usage(long promptTokens, long outputTokens, long totalTokens) {
    this(promptTokens, outputTokens, totalTokens, 0);
  }

  public static Usage of(GenerateContentResponse response) {
    return response.usageMetadata().map(Usage::of).orElse(NONE);
  }

  /** Google leaves a count of zero out ({@code promptTokenCount} alone for an answer cut before any token). */
  static Usage of(GenerateContentResponseUsageMetadata metadata) {
    long prompt = metadata.promptTokenCount().orElse(0);
    long thoughts = metadata.thoughtsTokenCount().orElse(0);
    long output = metadata.candidatesTokenCount().orElse(0) + thoughts;
    long total = metadata.totalTokenCount().map(Integer::longValue).orElse(prompt + output);
    return new Usage(prompt, output, total, thoughts);
  }
}
