package dev.once.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.types.BatchJob;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.InlinedResponse;
import com.google.genai.types.JobError;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One answer of a finished batch job: the key it came back under (an inlined response's {@code metadata}, a
 * responses file line's {@code key}; either may be missing, python-genai#2008), the document reference its text
 * names ({@link InvoiceSchema#REFERENCE}: what the model copied from its request), and the analysis or the error.
 * Which document it belongs to is {@link BatchAnswers}'s to say, never its position.
 */
public record BatchResult(Optional<String> documentKey, Optional<String> reference, Optional<Analysis> analysis,
    Optional<BatchError> error) {
  private static final ObjectMapper JSON = new ObjectMapper();
  /**
   * How an answer in the referenced schema starts: the reference comes first (its property order), so even an answer
   * cut short at its token bound, which is not JSON, still names its document.
   */
  private static final Pattern LEADING_REFERENCE =
      Pattern.compile("\\s*\\{\\s*\"" + InvoiceSchema.REFERENCE + "\"\\s*:\\s*\"([0-9a-f]{16})\"");

  /** An answer (or an error) without a reference: a job made before requests carried one. */
  public BatchResult(Optional<String> documentKey, Optional<Analysis> analysis, Optional<BatchError> error) {
    this(documentKey, Optional.empty(), analysis, error);
  }

  /** Gemini's error for the request filed under {@code documentKey}. */
  public static BatchResult failed(Optional<String> documentKey, BatchError error) {
    return new BatchResult(documentKey, Optional.empty(), Optional.empty(), Optional.of(error));
  }

  static BatchResult answered(Optional<String> documentKey, String model, GenerateContentResponse response,
      Instant answeredAt) {
    Analysis analysis = InvoiceAnalyzer.interpret(model, response, answeredAt);
    return new BatchResult(documentKey, reference(analysis, response), Optional.of(analysis), Optional.empty());
  }

  /** The reference the answer names: its parsed JSON's, else what its text starts with; empty when neither. */
  static Optional<String> reference(Analysis analysis, GenerateContentResponse response) {
    if (analysis.invoice().get(InvoiceSchema.REFERENCE) instanceof String parsed) {
      return Optional.of(parsed);
    }
    String text;
    try {
      text = response.text();
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    Matcher leading = text == null ? null : LEADING_REFERENCE.matcher(text);
    return leading != null && leading.lookingAt() ? Optional.of(leading.group(1)) : Optional.empty();
  }

  /** @param answeredAt when the job ended (its answers' billing day); null: unknown */
  public static List<BatchResult> inlined(BatchJob job, String model, Instant answeredAt) {
    List<BatchResult> results = new ArrayList<>();
    List<InlinedResponse> responses =
        job.dest().flatMap(d -> d.inlinedResponses()).orElse(List.of());
    for (InlinedResponse response : responses) {
      Optional<String> documentKey = response.metadata().map(m -> m.get(BatchJobs.DOCUMENT_KEY));
      if (response.response().isPresent()) {
        results.add(answered(documentKey, model, response.response().get(), answeredAt));
      } else {
        results.add(failed(documentKey, error(response.error().orElse(null))));
      }
    }
    return results;
  }

  /** Lines of a JSONL responses file: {@code {"key":…, "response":{…}}} or {@code {"key":…, "error":{…}}}. */
  public static List<BatchResult> fromFile(byte[] jsonl, String model, Instant answeredAt) {
    try (BufferedReader lines = new BufferedReader(new StringReader(
        new String(jsonl, StandardCharsets.UTF_8)))) {
      return fromLines(lines, model, answeredAt);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The same, read a line at a time (a job's responses file can be hundreds of MB). */
  static List<BatchResult> fromLines(BufferedReader lines, String model, Instant answeredAt)
      throws IOException {
    List<BatchResult> results = new ArrayList<>();
    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      try {
        JsonNode node = JSON.readTree(line);
        Optional<String> key = Optional.ofNullable(node.path("key").asText(null))
            .or(() -> Optional.ofNullable(node.path("metadata").path(BatchJobs.DOCUMENT_KEY).asText(null)));
        if (node.hasNonNull("response")) {
          GenerateContentResponse response = GenerateContentResponse.fromJson(node.get("response").toString());
          results.add(answered(key, model, response, answeredAt));
        } else {
          JsonNode error = node.path("error");
          results.add(failed(key, new BatchError(error.path("code").asInt(2), error.path("status").asText(null),
              error.path("message").asText("no message"))));
        }
      } catch (IOException | RuntimeException e) {
        results.add(failed(Optional.empty(), new BatchError(2, "UNKNOWN", "unreadable result line")));
      }
    }
    return results;
  }

  /** Gemini's error for a request, or for a whole job: its google.rpc status. */
  public static BatchError error(JobError error) {
    if (error == null) {
      return new BatchError(2, "UNKNOWN", "the batch gave neither a response nor an error");
    }
    return new BatchError(error.code().orElse(2), null, error.message().orElse("no message"));
  }
}
