package dev.once.gemini;

import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;

/** Tokens one Gemini answer consumed; thinking tokens are billed as output. */
public record Usage(long promptTokens, long outputTokens, long totalTokens) {
  public static final Usage NONE = new Usage(0, 0, 0);

  public static Usage of(GenerateContentResponse response) {
    return response.usageMetadata().map(Usage::of).orElse(NONE);
  }

  static Usage of(GenerateContentResponseUsageMetadata metadata) {
    long prompt = metadata.promptTokenCount().orElse(0);
    long output = metadata.candidatesTokenCount().orElse(0) + metadata.thoughtsTokenCount().orElse(0);
    long total = metadata.totalTokenCount().map(Integer::longValue).orElse(prompt + output);
    return new Usage(prompt, output, total);
  }
}
