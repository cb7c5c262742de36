package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.errors.ClientException;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.File;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.google.genai.types.UploadFileConfig;
import dev.once.wire.http.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Files API and file-input batches of the stand-in, through the real SDK: names of the caller's, taken names,
 * get and delete, the per-file and per-project limits, a batch made from a file that is gone, and a job that keeps the
 * requests it was made from. What Google answers in each case is named in {@link GeminiFiles}.
 */
class BatchInputFileStandInTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static final int PER_FILE = 1_000;
  private static final int STORED = 1_500;
  private GeminiStandIn standIn;
  private Client client;

  @BeforeEach
  void start() {
    standIn = GeminiStandIn.start(GeminiStandIn.Options.defaults().withWebhookMode(WebhookMode.NEVER)
        .withFileLimits(PER_FILE, STORED));
    client = Client.builder().apiKey("k").httpOptions(HttpOptions.builder().baseUrl(standIn.baseUrl())
        .retryOptions(HttpRetryOptions.builder().attempts(1).build()).build()).build();
  }

  @AfterEach
  void stop() {
    client.close();
    standIn.close();
  }

  private File upload(String name, String text) {
    UploadFileConfig.Builder config = UploadFileConfig.builder().mimeType("application/jsonl");
    if (name != null) {
      config.name(name);
    }
    return client.files.upload(text.getBytes(StandardCharsets.UTF_8), config.build());
  }

  private static String line(String key, String text) {
    return "{\"key\":\"" + key + "\",\"request\":{\"contents\":[{\"parts\":[{\"text\":\"" + text + "\"}]}]}}\n";
  }

  @Test
  void aNameOfTheCallers_isKept_andATakenOneIsRefused409AfterTheBytes() {
    File first = upload("files/once-abc", line("a", "first"));
    assertEquals("files/once-abc", first.name().orElseThrow());

    ClientException taken = assertThrows(ClientException.class, () -> upload("files/once-abc", line("b", "second")));
    assertEquals(409, taken.code());
    assertEquals("ALREADY_EXISTS", taken.status());
    assertEquals("once-abc already exists.", taken.message());
    assertEquals(2, standIn.count("files.uploadChunk"), "the bytes were sent, then refused");
    assertEquals(1, standIn.count("files.uploadChunk.carriedOut"));
    assertEquals(line("a", "first").length(), client.files.get("files/once-abc", null).sizeBytes().orElseThrow(),
        "the first file is left as it was");
  }

  @Test
  void aNameTheApiDoesNotAllow_isRefusedAtTheStart() {
    for (String name : List.of("files/Upper", "files/-dash", "files/" + "x".repeat(41))) {
      ClientException refused = assertThrows(ClientException.class, () -> upload(name, line("a", "a")), name);
      assertEquals(400, refused.code(), name);
      assertEquals("INVALID_ARGUMENT", refused.status(), name);
    }
    assertEquals(0, standIn.count("files.uploadChunk"), "no bytes sent");
  }

  @Test
  void deletedFile_isGoneForGetAndDelete_andABatchFromItIsRefusedMakingNoJob() {
    String name = upload(null, line("a", "a")).name().orElseThrow();
    assertEquals(name, client.files.get(name, null).name().orElseThrow());

    client.files.delete(name, null);

    ClientException get = assertThrows(ClientException.class, () -> client.files.get(name, null));
    assertEquals(403, get.code());
    assertEquals("PERMISSION_DENIED", get.status());
    assertEquals(403, assertThrows(ClientException.class, () -> client.files.delete(name, null)).code());
    ClientException batch = assertThrows(ClientException.class, () -> client.batches.create(MODEL,
        BatchJobSource.builder().fileName(name).build(), CreateBatchJobConfig.builder().displayName("gone").build()));
    assertEquals(403, batch.code());
    assertEquals(0, standIn.count("batchGenerateContent.carriedOut"), "no job made");
    assertTrue(standIn.batchNames().isEmpty());
  }

  @Test
  void aFileOverItsLimit_isRefused400_andTheProjectsStorage429UntilAFileIsDeleted() {
    assertEquals(400, assertThrows(ClientException.class, () -> upload(null, "x".repeat(PER_FILE + 1))).code());

    String first = upload(null, "x".repeat(800)).name().orElseThrow();
    ClientException full = assertThrows(ClientException.class, () -> upload(null, "y".repeat(800)));
    assertEquals(429, full.code());
    assertEquals("RESOURCE_EXHAUSTED", full.status());
    assertTrue(full.message().contains("generativelanguage.googleapis.com/file_storage_bytes, limit: " + STORED),
        full.message());
    assertEquals(800, standIn.storedFileBytes());

    client.files.delete(first, null);
    assertEquals(800, client.files.get(upload(null, "y".repeat(800)).name().orElseThrow(), null)
        .sizeBytes().orElseThrow());
  }

  @Test
  void aJobFromAFile_keepsItsRequestsAndKeys_whenTheFileIsDeleted_andWritesAResponsesFileGetCannotRead(
      @TempDir Path dir) throws Exception {
    String input = upload("files/once-job", line("doc-1", "first") + line("doc-2", "second")).name().orElseThrow();
    String job = client.batches.create(MODEL, BatchJobSource.builder().fileName(input).build(),
        CreateBatchJobConfig.builder().displayName("from a file").build()).name().orElseThrow();
    assertEquals(List.of("doc-1", "doc-2"), standIn.requests(job).stream().map(r -> r.get("key").asText()).toList());
    client.files.delete(input, null);

    standIn.completeAll();

    String output = client.batches.get(job, null).dest().orElseThrow().fileName().orElseThrow();
    assertTrue(output.matches("files/batch-[a-z0-9]{36}"), output);
    ClientException get = assertThrows(ClientException.class, () -> client.files.get(output, null));
    assertEquals(400, get.code(), "an id of 42 characters, over the 40 files.get takes");
    Path downloaded = dir.resolve("out.jsonl");
    client.files.download(output, downloaded.toString(), null);
    List<JsonNode> lines = Files.readAllLines(downloaded).stream().map(Json::parseTrusted).toList();
    assertEquals(List.of("doc-1", "doc-2"), lines.stream().map(l -> l.get("key").asText()).toList());
    assertTrue(lines.get(1).path("response").path("candidates").get(0).toString().contains("second"));
    assertFalse(standIn.fileNames().contains(input));
  }
}
