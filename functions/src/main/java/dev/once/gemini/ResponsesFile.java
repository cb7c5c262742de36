package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.errors.ApiException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/** A finished batch job's responses file, read from the Files API. */
final class ResponsesFile {
  private ResponsesFile() {}

  /**
   * Its answers of a responses file, downloaded to a temporary file and read a line at a time. A file Gemini no longer
   * has (403, 404: the Files API keeps a file 48 hours) is {@link AnswersGone}; any other failure is thrown as it came.
   */
  static List<BatchResult> read(Client client, String file, String model, Instant answeredAt) {
    Path download = null;
    try {
      download = Files.createTempFile("once-batch-", ".jsonl");
      try {
        client.files.download(file, download.toString(), null);
      } catch (ApiException e) {
        if (e.code() == 403 || e.code() == 404) {
          throw new AnswersGone("its responses file " + file + " cannot be read: " + GeminiErrors.describe(e), e);
        }
        throw e;
      }
      try (BufferedReader lines = Files.newBufferedReader(download)) {
        return BatchResult.fromLines(lines, model, answeredAt);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the responses file " + file, e);
    } finally {
      if (download != null) {
        download.toFile().delete();
      }
    }
  }
}
