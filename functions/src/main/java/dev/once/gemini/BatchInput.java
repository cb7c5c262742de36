package dev.once.gemini;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.genai.types.GenerateContentConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A job's requests as the JSONL input file of the Batch API: one line per document, {@code {"key": its idempotency
 * key, "request": a GenerateContentRequest}} ("Each line in this file must be a JSON object containing a user-defined
 * key and a request object, where the request is a valid GenerateContentRequest object. The user-defined key is used in
 * the response to indicate which output is the result of which request", ai.google.dev/gemini-api/docs/batch-api,
 * "Input file"). The request is the REST form of what {@link BatchJobs} inlines for the same document: the same
 * contents, and {@link InvoicePrompt#config()} as {@code generationConfig}. Its size also tells whether the job may
 * be inlined instead: the inlined requests are the same JSON, keyed by metadata instead.
 */
public final class BatchInput {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MIME_TYPE = "application/jsonl";

  private final byte[] jsonl;

  private BatchInput(byte[] jsonl) {
    this.jsonl = jsonl;
  }

  public static BatchInput of(List<BatchJobs.Request> requests) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (BatchJobs.Request request : requests) {
      out.writeBytes(line(request));
      out.write('\n');
    }
    return new BatchInput(out.toByteArray());
  }

  /** One document's line, without its newline. */
  public static byte[] line(BatchJobs.Request request) {
    try {
      ObjectNode line = JSON.createObjectNode();
      line.put("key", request.documentKey().value());
      ObjectNode body = line.putObject("request");
      body.putArray("contents")
          .add(JSON.readTree(InvoicePrompt.content(request.content(), request.mimeType()).toJson()));
      GenerateContentConfig config = InvoicePrompt.config().build();
      ObjectNode generation = body.putObject("generationConfig");
      config.responseMimeType().ifPresent(value -> generation.put("responseMimeType", value));
      if (config.responseSchema().isPresent()) {
        generation.set("responseSchema", JSON.readTree(config.responseSchema().get().toJson()));
      }
      config.maxOutputTokens().ifPresent(value -> generation.put("maxOutputTokens", value));
      config.temperature().ifPresent(value -> generation.put("temperature", value));
      return JSON.writeValueAsBytes(line);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write the batch input line of " + request.documentKey().value(), e);
    }
  }

  public byte[] bytes() {
    return jsonl;
  }

  public long size() {
    return jsonl.length;
  }

  public String mimeType() {
    return MIME_TYPE;
  }
}
