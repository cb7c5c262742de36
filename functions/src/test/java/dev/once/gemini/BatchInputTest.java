package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.Client;
import com.google.genai.types.BatchJob;
import dev.once.key.IdempotencyKey;
import dev.once.local.gemini.BatchState;
import dev.once.local.gemini.GeminiStandIn;
import dev.once.local.http.AmbiguousFailure;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A job's JSONL input file and the choice between it and inlined requests, against the stand-in: the lines are
 * {@code {"key","request"}} with the request the SDK inlines for the same document, a job over the inline limit is
 * made from a file named after its gathering, a retry after a lost upload answer reuses the stored file instead of
 * filling the project's storage, and its completion's delete removes it.
 */
class BatchInputTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GeminiStandIn gemini;
  private static Client client;

  @BeforeAll
  static void start() {
    gemini = GeminiStandIn.start();
    client = StandInClient.of(gemini);
  }

  @AfterAll
  static void stop() {
    client.close();
    gemini.close();
  }

  private static List<BatchJobs.Request> requests(String prefix, int count) {
    List<BatchJobs.Request> requests = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      requests.add(BatchJobs.Request.of(gathering(prefix), IdempotencyKey.of("gcs:inbox/" + prefix + "/doc-" + i
          + ".pdf#1"), ("%PDF-1.4 " + prefix + " " + i).getBytes(StandardCharsets.US_ASCII), "application/pdf"));
    }
    return requests;
  }

  /** A gathering's id (32 hex digits), one per test. */
  private static String gathering(String seed) {
    return UUID.nameUUIDFromBytes(seed.getBytes(StandardCharsets.US_ASCII)).toString().replace("-", "");
  }

  @Test
  void aLine_isTheDocumentsKeyAndAGenerateContentRequestOfItsContentAndTheInvoiceConfig() throws Exception {
    BatchJobs.Request request = requests("line", 1).get(0);

    JsonNode line = JSON.readTree(BatchInput.line(request, MODEL));

    assertEquals(List.of("key", "request"), iterable(line.fieldNames()));
    assertEquals(request.documentKey().value(), line.get("key").asText());
    JsonNode parts = line.at("/request/contents/0/parts");
    assertEquals("application/pdf", parts.at("/0/inlineData/mimeType").asText());
    assertEquals(new String(request.content(), StandardCharsets.US_ASCII),
        new String(Base64.getDecoder().decode(parts.at("/0/inlineData/data").asText()), StandardCharsets.US_ASCII));
    assertEquals(InvoicePrompt.INSTRUCTION, parts.at("/1/text").asText());
    assertEquals("Set documentReference to \"" + request.reference() + "\" exactly.", parts.at("/2/text").asText(),
        "the reference its answer copies");
    assertEquals(JobNames.reference(gathering("line"), request.documentKey().documentId()), request.reference());
    JsonNode generation = line.at("/request/generationConfig");
    assertEquals("application/json", generation.get("responseMimeType").asText());
    assertEquals(InvoicePrompt.MAX_OUTPUT_TOKENS, generation.get("maxOutputTokens").asInt());
    assertFalse(generation.has("temperature"),
        "no sampling parameters: deprecated on Gemini 3, refused by later models");
    assertEquals("MEDIA_RESOLUTION_MEDIUM", generation.get("mediaResolution").asText(), "a PDF page at 560 tokens");
    assertEquals("MINIMAL", generation.at("/thinkingConfig/thinkingLevel").asText(),
        "the thinking level the catalog gives " + MODEL);
    assertEquals(JSON.readTree(InvoiceSchema.REFERENCED.toJson()), generation.get("responseSchema"));
    assertEquals(InvoiceSchema.REFERENCE, generation.at("/responseSchema/propertyOrdering/0").asText(),
        "the reference first: an answer cut short still starts with it");
    assertFalse(new String(BatchInput.line(request, MODEL), StandardCharsets.UTF_8).contains("\n"), "one line");
  }

  @Test
  void theFile_isTheLinesEachEndedByANewline_readInFullChunks() throws Exception {
    List<BatchJobs.Request> requests = requests("stream", 3);
    BatchInput input = BatchInput.of(requests, MODEL);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (BatchJobs.Request request : requests) {
      expected.write(BatchInput.line(request, MODEL));
      expected.write('\n');
    }

    InputStream stream = input.stream();
    byte[] chunk = new byte[(int) input.size() - 1];
    assertEquals(chunk.length, stream.read(chunk, 0, chunk.length), "a read is filled across lines");
    assertEquals('\n', stream.read());
    assertEquals(-1, stream.read(chunk, 0, chunk.length));
    assertEquals(expected.size(), input.size());
    assertEquals(new String(expected.toByteArray(), 0, chunk.length, StandardCharsets.UTF_8),
        new String(chunk, StandardCharsets.UTF_8));
    assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
        .digest(expected.toByteArray())), HexFormat.of().formatHex(input.sha256()));
  }

  /** Over the SDK's 8 MiB chunk: the upload is several requests, and the file arrives whole. */
  @Test
  void aFileOfSeveralChunks_arrivesWhole() {
    List<BatchJobs.Request> requests = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      byte[] pdf = new byte[3_000_000];
      Arrays.fill(pdf, (byte) ('a' + i));
      requests.add(BatchJobs.Request.of(gathering("big"), IdempotencyKey.of("gcs:inbox/big/doc-" + i + ".pdf#1"), pdf,
          "application/pdf"));
    }
    String id = gathering("several-chunks");
    long chunks = gemini.count("files.uploadChunk");

    BatchJob job = new BatchJobs(client, MODEL, Optional.empty(), 1).submit(id, requests);

    assertEquals(2, gemini.count("files.uploadChunk") - chunks, "12 MB of base64: two chunks");
    assertEquals(BatchInput.of(requests, MODEL).size(),
        client.files.get("files/once-" + id, null).sizeBytes().orElseThrow());
    List<JsonNode> lines = gemini.requests(job.name().orElseThrow());
    assertEquals(3, lines.size());
    assertEquals(Base64.getEncoder().encodeToString(requests.get(2).content()),
        lines.get(2).at("/request/contents/0/parts/0/inlineData/data").asText());
  }

  @Test
  void aFileJobsRequests_areTheOnesTheSdkInlines_keyedByTheDocumentInsteadOfItsMetadata() {
    List<BatchJobs.Request> requests = requests("same", 2);
    BatchJob inlined = new BatchJobs(client, MODEL, Optional.empty()).submit(gathering("same-inline"), requests);
    BatchJob fromFile = new BatchJobs(client, MODEL, Optional.empty(), 1).submit(gathering("same-file"), requests);

    List<JsonNode> sent = gemini.requests(inlined.name().orElseThrow());
    List<JsonNode> lines = gemini.requests(fromFile.name().orElseThrow());
    assertEquals(2, lines.size());
    for (int i = 0; i < requests.size(); i++) {
      String key = requests.get(i).documentKey().value();
      assertEquals(key, sent.get(i).at("/metadata/" + BatchJobs.DOCUMENT_KEY).asText());
      assertEquals(key, lines.get(i).get("key").asText());
      assertEquals(sent.get(i).get("request"), lines.get(i).get("request"), "the same request, line " + i);
    }
  }

  @Test
  void aJobUnderTheLimit_isInlined_andOneOverIt_isMadeFromAFileNamedAfterItsGathering_deletedWhenItEnds() {
    List<BatchJobs.Request> requests = requests("choice", 3);
    long size = BatchInput.of(requests, MODEL).size();
    long uploads = gemini.count("files.upload");

    BatchJob inlined = new BatchJobs(client, MODEL, Optional.empty(), size).submit(gathering("choice-a"), requests);
    assertEquals(uploads, gemini.count("files.upload"), "at the limit: inlined, nothing uploaded");
    assertTrue(gemini.requests(inlined.name().orElseThrow()).get(0).has("metadata"));

    String id = gathering("choice-b");
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty(), size - 1);
    BatchJob fromFile = jobs.submit(id, requests);
    assertEquals(uploads + 1, gemini.count("files.upload"), "over it: one upload");
    assertTrue(gemini.fileNames().contains("files/once-" + id), gemini.fileNames().toString());
    assertEquals(3, gemini.requests(fromFile.name().orElseThrow()).size());

    gemini.finish(fromFile.name().orElseThrow(), BatchState.SUCCEEDED);
    BatchJob ended = jobs.find(fromFile.name().orElseThrow()).orElseThrow();
    assertEquals(3, jobs.results(ended).stream().filter(r -> r.analysis().isPresent()).count(),
        "three answers, read from the responses file");
    jobs.deleteInput("files/once-" + id);
    assertFalse(gemini.fileNames().contains("files/once-" + id), "the input deleted once the job ended");
    jobs.deleteInput("files/once-" + id); // again, as a retried completion would: nothing there, nothing thrown
  }

  /**
   * Right before batches.create the submitter is told the input file the job is made from (to record it, and delete
   * that file once the job ended), or that it is inlined; {@code FILE} makes a file of a job under the inline limit.
   */
  @Test
  void theSubmitter_isToldTheInputFileAJobIsMadeFrom_orThatItIsInlined() {
    List<BatchJobs.Request> requests = requests("told", 2);
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty());
    List<Optional<String>> told = new ArrayList<>();

    jobs.submit(gathering("told-inlined"), requests, BatchJobs.Input.INLINED_WHEN_SMALL, told::add);
    BatchJob fromFile = jobs.submit(gathering("told-file"), requests, BatchJobs.Input.FILE, told::add);

    assertEquals(List.of(Optional.empty(), Optional.of("files/once-" + gathering("told-file"))), told);
    assertEquals(requests.get(0).documentKey().value(), gemini.requests(fromFile.name().orElseThrow()).get(0)
        .get("key").asText(), "under the limit, yet a file: its lines keyed");
  }

  /** The connection reset after the file was stored: the SDK cannot tell, the submission was not made. */
  @Test
  void aRetryAfterTheUploadsAnswerWasLost_reusesTheStoredFile_andMakesOneJob() {
    List<BatchJobs.Request> requests = requests("lost", 2);
    String id = gathering("lost-upload");
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty(), 1);
    long stored = gemini.count("files.uploadChunk.carriedOut");
    long created = gemini.count("batchGenerateContent.carriedOut");
    gemini.ambiguousNext("files.uploadChunk", 1, AmbiguousFailure.RESET);

    assertThrows(NotSubmitted.class, () -> jobs.submit(id, requests));
    assertEquals(created, gemini.count("batchGenerateContent.carriedOut"), "no job asked for");
    BatchJob job = jobs.submit(id, requests);

    assertEquals(stored + 1, gemini.count("files.uploadChunk.carriedOut"), "one file stored");
    assertEquals(1, gemini.fileNames().stream().filter(("files/once-" + id)::equals).count());
    assertEquals(created + 1, gemini.count("batchGenerateContent.carriedOut"));
    assertEquals(2, gemini.requests(job.name().orElseThrow()).size());
  }

  /**
   * A 5xx after the file was stored carries no X-Goog-Upload-Status, so the SDK sends the last request again
   * (UploadClient, up to 3 times), and the finished upload answers the stored file.
   */
  @Test
  void aServerErrorAfterTheFileWasStored_isRecoveredByTheSdksResend() {
    String id = gathering("resent-upload");
    long stored = gemini.count("files.uploadChunk.carriedOut");
    long sent = gemini.count("files.uploadChunk");
    gemini.ambiguousNext("files.uploadChunk", 1, AmbiguousFailure.SERVER_ERROR);

    BatchJob job = new BatchJobs(client, MODEL, Optional.empty(), 1).submit(id, requests("resent", 2));

    assertEquals(2, gemini.count("files.uploadChunk") - sent, "the last request, sent twice");
    assertEquals(2, gemini.count("files.uploadChunk.carriedOut") - stored, "stored once, answered twice");
    assertEquals(1, gemini.fileNames().stream().filter(("files/once-" + id)::equals).count());
    assertEquals(2, gemini.requests(job.name().orElseThrow()).size());
  }

  @Test
  void aRetryWhoseGatheringLostADocument_replacesTheStoredFile() {
    List<BatchJobs.Request> requests = requests("shrunk", 3);
    String id = gathering("shrunk-upload");
    BatchJobs jobs = new BatchJobs(client, MODEL, Optional.empty(), 1);
    gemini.ambiguousNext("files.uploadChunk", 1, AmbiguousFailure.RESET);
    assertThrows(NotSubmitted.class, () -> jobs.submit(id, requests));

    BatchJob job = jobs.submit(id, requests.subList(0, 2));

    assertEquals(2, gemini.requests(job.name().orElseThrow()).size(), "the job holds the two documents left");
    assertEquals(BatchInput.of(requests.subList(0, 2), MODEL).size(), client.files.get("files/once-" + id, null)
        .sizeBytes().orElseThrow());
  }

  private static List<String> iterable(Iterator<String> names) {
    List<String> all = new ArrayList<>();
    names.forEachRemaining(all::add);
    return all;
  }
}
