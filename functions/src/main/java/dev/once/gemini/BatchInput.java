package dev.once.gemini;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.genai.types.GenerateContentConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's requests as the JSONL input file of the Batch API: one line per document, {@code {"key": its idempotency
 * key, "request": a GenerateContentRequest}} ("Each line in this file must be a JSON object containing a user-defined
 * key and a request object, where the request is a valid GenerateContentRequest object. The user-defined key is used in
 * the response to indicate which output is the result of which request", ai.google.dev/gemini-api/docs/batch-api,
 * "Input file"). The request is the REST form of what {@link BatchJobs} inlines for the same document: the same
 * contents, and {@link InvoicePrompt#config()} as {@code generationConfig}. Its size also tells whether the job may
 * be inlined instead: the inlined requests are the same JSON, keyed by metadata instead. The lines are kept apart and
 * read in turn ({@link #stream()}), so the file never exists as one more copy in memory.
 */
public final class BatchInput {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MIME_TYPE = "application/jsonl";
  private static final byte[] NEWLINE = {'\n'};

  private final List<byte[]> lines;
  private final long size;

  private BatchInput(List<byte[]> lines) {
    this.lines = lines;
    this.size = lines.stream().mapToLong(line -> line.length + 1L).sum();
  }

  public static BatchInput of(List<BatchJobs.Request> requests, String model) {
    List<byte[]> lines = new ArrayList<>(requests.size());
    for (BatchJobs.Request request : requests) {
      lines.add(line(request, model));
    }
    return new BatchInput(lines);
  }

  /** One document's line, without its newline. */
  public static byte[] line(BatchJobs.Request request, String model) {
    try {
      ObjectNode line = JSON.createObjectNode();
      line.put("key", request.documentKey().value());
      ObjectNode body = line.putObject("request");
      body.putArray("contents")
          .add(JSON.readTree(InvoicePrompt.batchContent(request.content(), request.mimeType(), request.reference())
              .toJson()));
      GenerateContentConfig config = InvoicePrompt.batchConfig(model).build();
      ObjectNode generation = body.putObject("generationConfig");
      config.responseMimeType().ifPresent(value -> generation.put("responseMimeType", value));
      if (config.responseSchema().isPresent()) {
        generation.set("responseSchema", JSON.readTree(config.responseSchema().get().toJson()));
      }
      config.maxOutputTokens().ifPresent(value -> generation.put("maxOutputTokens", value));
      config.mediaResolution().ifPresent(value -> generation.put("mediaResolution", value.toString()));
      config.thinkingConfig().flatMap(thinking -> thinking.thinkingLevel())
          .ifPresent(level -> generation.putObject("thinkingConfig").put("thinkingLevel", level.toString()));
      return JSON.writeValueAsBytes(line);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write the batch input line of " + request.documentKey().value(), e);
    }
  }

  /**
   * The file's bytes, line after line, each ended by a newline. A read fills what it is asked for until the end:
   * the SDK takes a short read for the last chunk (UploadClient reads 8 MiB chunks until one comes back short).
   */
  public InputStream stream() {
    return new InputStream() {
      private int line;
      private int offset;

      @Override
      public int read() {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] into, int from, int length) {
        int read = 0;
        while (read < length && line < lines.size()) {
          byte[] current = lines.get(line);
          if (offset == current.length) {
            into[from + read++] = '\n';
            line++;
            offset = 0;
            continue;
          }
          int n = Math.min(length - read, current.length - offset);
          System.arraycopy(current, offset, into, from + read, n);
          offset += n;
          read += n;
        }
        return read == 0 && length > 0 ? -1 : read;
      }
    };
  }

  public long size() {
    return size;
  }

  /** The SHA-256 of the file's bytes. */
  public byte[] sha256() {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (byte[] line : lines) {
        digest.update(line);
        digest.update(NEWLINE);
      }
      return digest.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  public String mimeType() {
    return MIME_TYPE;
  }
}
