package dev.once.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.types.BatchJob;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.InlinedResponse;
import com.google.genai.types.JobError;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One answer of a finished batch job: for which document (when the request named it), and the analysis or
 * the error. Inlined responses carry the request's metadata; a responses file carries each line's {@code key}.
 */
public record BatchResult(Optional<String> documentKey, Optional<Analysis> analysis, Optional<String> error) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static List<BatchResult> inlined(BatchJob job, String model) {
    List<BatchResult> results = new ArrayList<>();
    List<InlinedResponse> responses =
        job.dest().flatMap(d -> d.inlinedResponses()).orElse(List.of());
    for (InlinedResponse response : responses) {
      Optional<String> documentKey = response.metadata().map(m -> m.get(BatchJobs.DOCUMENT_KEY));
      if (response.response().isPresent()) {
        results.add(new BatchResult(documentKey,
            Optional.of(InvoiceAnalyzer.interpret(model, response.response().get())), Optional.empty()));
      } else {
        results.add(new BatchResult(documentKey, Optional.empty(),
            Optional.of(describe(response.error().orElse(null)))));
      }
    }
    return results;
  }

  /** Lines of a JSONL responses file: {@code {"key":…, "response":{…}}} or {@code {"key":…, "error":{…}}}. */
  public static List<BatchResult> fromFile(byte[] jsonl, String model) {
    List<BatchResult> results = new ArrayList<>();
    for (String line : new String(jsonl, StandardCharsets.UTF_8).split("\r?\n")) {
      if (line.isBlank()) {
        continue;
      }
      try {
        JsonNode node = JSON.readTree(line);
        Optional<String> key = Optional.ofNullable(node.path("key").asText(null))
            .or(() -> Optional.ofNullable(node.path("metadata").path(BatchJobs.DOCUMENT_KEY).asText(null)));
        if (node.hasNonNull("response")) {
          GenerateContentResponse response = GenerateContentResponse.fromJson(node.get("response").toString());
          results.add(new BatchResult(key, Optional.of(InvoiceAnalyzer.interpret(model, response)), Optional.empty()));
        } else {
          results.add(new BatchResult(key, Optional.empty(),
              Optional.of("the batch answered with an error: " + node.path("error").path("message").asText("unknown"))));
        }
      } catch (IOException | RuntimeException e) {
        results.add(new BatchResult(Optional.empty(), Optional.empty(), Optional.of("unreadable result line")));
      }
    }
    return results;
  }

  static String describe(JobError error) {
    if (error == null) {
      return "the batch gave neither a response nor an error";
    }
    return "the batch answered with error " + error.code().map(String::valueOf).orElse("?") + ": "
        + error.message().orElse("no message");
  }
}
