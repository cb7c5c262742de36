package dev.once.local.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.Client;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.Content;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.InlinedResponse;
import com.google.genai.types.JobState;
import com.google.genai.types.Part;
import com.google.genai.types.Schema;
import com.google.genai.types.Type;
import com.google.genai.types.UploadFileConfig;
import dev.once.wire.http.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The answer faults the stand-in makes per job, read back through the real SDK, and the instruction each request's
 * answer follows to name the document it was generated for ("Set ref to "…" exactly.").
 */
class AnswerFaultsTest {
  private static final String MODEL = "gemini-3.5-flash-lite";
  private static final Schema SCHEMA = Schema.builder().type(Type.Known.OBJECT)
      .properties(Map.of("ref", Schema.builder().type(Type.Known.STRING).build(),
          "total", Schema.builder().type(Type.Known.NUMBER).build()))
      .propertyOrdering(List.of("ref", "total")).required(List.of("ref", "total")).build();
  private static GeminiStandIn standIn;
  private static Client client;

  @BeforeAll
  static void start() {
    standIn = GeminiStandIn.start();
    client = Client.builder().apiKey("any").httpOptions(HttpOptions.builder().baseUrl(standIn.baseUrl()).build())
        .build();
  }

  @AfterAll
  static void stop() {
    client.close();
    standIn.close();
  }

  private static Content prompt(String ref) {
    return Content.builder().role("user").parts(Part.fromText("Extract the total."),
        Part.fromText("Set ref to \"" + ref + "\" exactly.")).build();
  }

  /** A job of {@code count} inlined requests, each with {@code metadata.key} = its ref. */
  private static String inlined(int count) {
    List<InlinedRequest> requests = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      requests.add(InlinedRequest.builder().contents(List.of(prompt("r" + i)))
          .config(GenerateContentConfig.builder().responseMimeType("application/json").responseSchema(SCHEMA).build())
          .metadata(Map.of("key", "r" + i)).build());
    }
    return client.batches.create(MODEL, BatchJobSource.builder().inlinedRequests(requests).build(),
        CreateBatchJobConfig.builder().displayName("faults").build()).name().orElseThrow();
  }

  /** Each answer: {@code [metadata key or null, the ref its text names]}. */
  private static List<List<String>> answers(String job) {
    BatchJob done = client.batches.get(job, null);
    List<List<String>> answers = new ArrayList<>();
    for (InlinedResponse response : done.dest().orElseThrow().inlinedResponses().orElseThrow()) {
      String key = response.metadata().map(m -> m.get("key")).orElse(null);
      String ref = Json.parseTrusted(response.response().orElseThrow().text()).get("ref").asText();
      answers.add(Arrays.asList(key, ref));
    }
    return answers;
  }

  @Test
  void asGoogleDocumentsThem_eachAnswerInRequestOrder_withItsMetadata_namingItsDocument() {
    String job = inlined(3);
    standIn.finish(job, BatchState.SUCCEEDED);

    assertEquals(List.of(List.of("r0", "r0"), List.of("r1", "r1"), List.of("r2", "r2")), answers(job));
  }

  @Test
  void shuffledAndWithoutMetadata_eachAnswerStillNamesItsDocument() {
    String job = inlined(4);
    standIn.answerFaults(job, AnswerFault.SHUFFLED, AnswerFault.NO_METADATA);
    standIn.finish(job, BatchState.SUCCEEDED);

    List<List<String>> answers = answers(job);
    assertTrue(answers.stream().allMatch(answer -> answer.get(0) == null), "no metadata: " + answers);
    List<String> refs = answers.stream().map(answer -> answer.get(1)).toList();
    assertNotEquals(List.of("r0", "r1", "r2", "r3"), refs, "out of order");
    assertEquals(List.of("r0", "r1", "r2", "r3"), refs.stream().sorted().toList(), "every request answered once");
  }

  @Test
  void misfiled_theFirstTwoAnswersComeUnderEachOthersKey() {
    String job = inlined(3);
    standIn.answerFaults(job, AnswerFault.MISFILED);
    standIn.finish(job, BatchState.SUCCEEDED);

    assertEquals(List.of(List.of("r1", "r0"), List.of("r0", "r1"), List.of("r2", "r2")), answers(job));
  }

  /** A job that expires (or is cancelled) part-way keeps what it answered in its output, as a succeeded one does. */
  @Test
  void partial_aJobThatExpiresHasAnsweredTheFirstHalfOfItsRequests() {
    String job = inlined(3);
    standIn.answerFaults(job, AnswerFault.PARTIAL);
    standIn.finish(job, BatchState.EXPIRED);

    assertEquals(JobState.Known.JOB_STATE_EXPIRED, client.batches.get(job, null).state().orElseThrow().knownEnum());
    assertEquals(List.of(List.of("r0", "r0"), List.of("r1", "r1")), answers(job));
  }

  @Test
  void aResponsesFile_misfiledAndShuffled_keepsItsLinesKeys_underTheWrongLines() throws Exception {
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      lines.append("{\"key\":\"r").append(i).append("\",\"request\":{\"contents\":[{\"role\":\"user\",\"parts\":[")
          .append("{\"text\":\"Set ref to \\\"r").append(i).append("\\\" exactly.\"}]}],\"generationConfig\":")
          .append("{\"responseMimeType\":\"application/json\",\"responseSchema\":").append(SCHEMA.toJson())
          .append("}}}\n");
    }
    String file = client.files.upload(lines.toString().getBytes(StandardCharsets.UTF_8),
        UploadFileConfig.builder().mimeType("application/jsonl").build()).name().orElseThrow();
    String job = client.batches.create(MODEL, BatchJobSource.builder().fileName(file).build(),
        CreateBatchJobConfig.builder().displayName("file faults").build()).name().orElseThrow();
    standIn.answerFaults(job, AnswerFault.MISFILED, AnswerFault.NO_METADATA);
    standIn.finish(job, BatchState.SUCCEEDED);

    String output = client.batches.get(job, null).dest().orElseThrow().fileName().orElseThrow();
    Path download = Files.createTempFile("answers", ".jsonl");
    client.files.download(output, download.toString(), null);
    List<List<String>> answers = new ArrayList<>();
    for (String line : Files.readAllLines(download)) {
      var entry = Json.parseTrusted(line);
      String text = entry.at("/response/candidates/0/content/parts/0/text").asText();
      answers.add(List.of(entry.get("key").asText(), Json.parseTrusted(text).get("ref").asText()));
    }
    assertEquals(List.of(List.of("r1", "r0"), List.of("r0", "r1"), List.of("r2", "r2")), answers,
        "keys kept (NO_METADATA is about inlined responses), the first two under each other's");
  }
}
