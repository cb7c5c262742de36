package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.errors.ApiException;
import com.google.genai.types.DeleteFileConfig;
import com.google.genai.types.File;
import com.google.genai.types.GetFileConfig;
import com.google.genai.types.UploadFileConfig;
import dev.once.observe.Log;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;

/**
 * The input files of gathered jobs in the Files API, one per gathering under a name of its own,
 * {@code files/once-<gathering id>}, so that however often a submission is tried, the project holds one input file
 * per gathering: its 20 GB are never filled by retries. Uploading is not billed, and a failed upload made no job, so
 * every failure here is {@link NotStored}: the try is not performed, and the next one uploads again.
 *
 * <p>The Files API lets the caller choose the name ("If the name is empty on create, a unique name will be
 * generated", File resource, ai.google.dev/api/files) and refuses one already taken, 409 "{id} already exists."
 * after the bytes were sent (googleapis/python-genai#913). Then an earlier try stored a file by that name: one with
 * the same bytes (SHA-256, and size) is this try's input, used as it is; another (the gathering lost a document
 * since) is deleted and uploaded again. A name taken by a file one cannot see is left to expire, and the input goes
 * under a name Gemini generates.
 */
final class BatchInputFiles {
  /** Not stored: nothing was made of it, the submission may be tried again. */
  static final class NotStored extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotStored(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private static final String NAME_PREFIX = "files/once-";

  private final Client client;
  private final Log log;

  BatchInputFiles(Client client, Log log) {
    this.client = client;
    this.log = log;
  }

  /** The input file's name for this gathering: 5 + 32 characters, within the Files API's 40. */
  static String name(String gatheringId) {
    return NAME_PREFIX + gatheringId;
  }

  /** Stores the gathering's input (or finds it stored by an earlier try); returns the file's name. */
  String put(String gatheringId, BatchInput input) {
    String name = name(gatheringId);
    try {
      try {
        return upload(Optional.of(name), gatheringId, input);
      } catch (ApiException e) {
        if (e.code() != 409) {
          throw e;
        }
      }
      Optional<File> stored = find(name);
      if (stored.isPresent() && sameBytes(stored.get(), input)) {
        log.info("an earlier try stored this batch input", Map.of("file", name));
        return name;
      }
      if (stored.isEmpty()) {
        log.write("WARNING", "a batch input's name is taken by a file that cannot be read; it goes under another",
            Map.of("file", name));
        return upload(Optional.empty(), gatheringId, input);
      }
      client.files.delete(name, DeleteFileConfig.builder().httpOptions(GeminiClients.noRetries()).build());
      return upload(Optional.of(name), gatheringId, input);
    } catch (RuntimeException e) {
      throw new NotStored("could not store the batch input " + name + ": " + GeminiErrors.describe(e), e);
    }
  }

  /**
   * Deletes an input file, by the name its submission recorded (ours, or one the Files API generated), once its job
   * ended: Gemini reads it no more. Best effort: a file that is not there any more is fine, and any other failure is
   * logged, the file expiring 48 hours after its upload ("Files are stored for 48 hours",
   * ai.google.dev/gemini-api/docs/files).
   */
  void delete(String name) {
    try {
      client.files.delete(name, null);
      log.info("deleted a batch input", Map.of("file", name));
    } catch (ApiException e) {
      if (!absent(e)) {
        log.write("WARNING", "could not delete a batch input; it expires 48 hours after its upload",
            Map.of("file", name, "error", GeminiErrors.describe(e)));
      }
    } catch (RuntimeException e) {
      log.write("WARNING", "could not delete a batch input; it expires 48 hours after its upload",
          Map.of("file", name, "error", GeminiErrors.describe(e)));
    }
  }

  /**
   * One upload, not repeated by the SDK: a repeated last chunk after a lost answer would meet a finished upload, and
   * the next try of the submission finds the file by its name anyway.
   */
  private String upload(Optional<String> name, String gatheringId, BatchInput input) {
    UploadFileConfig.Builder config = UploadFileConfig.builder()
        .mimeType(input.mimeType())
        .displayName(JobNames.gatheringName(gatheringId))
        .httpOptions(GeminiClients.noRetries());
    name.ifPresent(config::name);
    File file = client.files.upload(input.stream(), input.size(), config.build());
    return file.name().orElseThrow(() -> new IllegalStateException("the Files API stored a file without a name"));
  }

  private Optional<File> find(String name) {
    try {
      return Optional.of(client.files.get(name, GetFileConfig.builder().build()));
    } catch (ApiException e) {
      if (absent(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** A file that is not there, or not ours: files.get answers 403 "...or it may not exist", or 404. */
  private static boolean absent(ApiException e) {
    return e.code() == 403 || e.code() == 404;
  }

  /**
   * The stored file holds these bytes: the same size, and the same SHA-256 when the file shows one. Between two tries
   * a gathering can only lose documents, so the size alone tells them apart; the hash is compared as the API
   * documents it ("SHA-256 hash of the uploaded bytes", a bytes field: base64 in JSON), or as base64 of its hex
   * digits, in case the service sends that: the size decides anyway.
   */
  static boolean sameBytes(File stored, BatchInput input) {
    if (!stored.sizeBytes().map(size -> size == input.size()).orElse(false)) {
      return false;
    }
    byte[] digest = input.sha256();
    Base64.Encoder base64 = Base64.getEncoder();
    return stored.sha256Hash().map(hash -> hash.equals(base64.encodeToString(digest))
        || hash.equals(base64.encodeToString(HexFormat.of().formatHex(digest).getBytes(StandardCharsets.US_ASCII))))
        .orElse(true);
  }
}
