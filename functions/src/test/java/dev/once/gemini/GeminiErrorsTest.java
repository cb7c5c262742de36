package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.errors.ApiException;
import com.google.genai.types.GenerateContentResponse;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class GeminiErrorsTest {
  /**
   * Google's words (a message can quote the document) are cut where a record or a log line keeps them, never between
   * the two halves of a character outside the BMP: half a pair is no character, and Firestore's UTF-8 would store "?".
   */
  @Test
  void googlesLongMessages_areCutWhole_charactersNeverSplit() {
    int max = GeminiErrors.MAX_DESCRIPTION_CHARS;
    String prefix = "Gemini answered 400 INVALID_ARGUMENT: ";
    // Each message puts the first half of a pair where the cut falls: at index max - 1 of what is cut.
    String described = GeminiErrors.describe(new ApiException(400, "INVALID_ARGUMENT",
        "x".repeat(max - 1 - prefix.length()) + "\uD83D\uDE00".repeat(100)));
    String inBatch = new BatchError(3, null, "x".repeat(max - 1) + "\uD83D\uDE00".repeat(100)).message();
    for (String cut : List.of(described, inBatch)) {
      assertTrue(cut.codePoints().noneMatch(c -> Character.isSurrogate((char) c)) && cut.endsWith("x…")
          && cut.length() == max, cut.length() + " chars, ending " + cut.substring(cut.length() - 3));
    }
    assertEquals("short", new BatchError(3, null, "short").message(), "a message within the bound is kept whole");
  }

  @Test
  void onlyWhatIsAboutTheDocumentsOwnContentOrSize_isTheDocumentsFault() {
    assertTrue(GeminiErrors.isPermanent(new ApiException(413, "PAYLOAD_TOO_LARGE", "too large")));
    for (String message : List.of("Request payload size exceeds the limit: 20971520 bytes.",
        "The input token count (1206232) exceeds the maximum number of tokens allowed (1048576).",
        "The document has no pages.", "Unable to process input image. Please retry or report in https://…",
        "The request's total referenced files bytes are too large to be read")) {
      assertTrue(GeminiErrors.isPermanent(new RuntimeException(new ApiException(400, "INVALID_ARGUMENT", message))),
          message);
    }
  }

  /** A model that refuses the schema or PDF input would otherwise reject every document for good. */
  @Test
  void aConfigurationTheRequestCarries_isNeverTheDocumentsFault() {
    for (String message : List.of("Request contains an invalid argument.",
        "Invalid JSON payload received. Unknown name \"responseSchema\" at 'generation_config': Cannot find field.",
        "* GenerateContentRequest.generation_config.response_schema.properties: should be non-empty for OBJECT type",
        "Unsupported MIME type: application/pdf", "models/gemini-old is not found for API version v1",
        "The input token count exceeds the maximum number of tokens allowed for this model's schema")) {
      assertFalse(GeminiErrors.isPermanent(new ApiException(400, "INVALID_ARGUMENT", message)), message);
    }
  }

  @Test
  void refusalsBeforeAnyWork_areTold_fromFailuresThatMayHaveBeenBilled() {
    for (int code : new int[] {400, 401, 403, 404, 429, 503}) {
      assertTrue(GeminiErrors.refusedBeforeWork(new ApiException(code, "X", "m")), "code " + code);
    }
    for (int code : new int[] {500, 502, 504}) {
      assertFalse(GeminiErrors.refusedBeforeWork(new ApiException(code, "X", "m")), "code " + code);
    }
    assertFalse(GeminiErrors.refusedBeforeWork(new UncheckedIOException(new SocketTimeoutException())));
  }

  @Test
  void onlyARefusalWhoseCanonicalMeaningRulesOutTheJob_provesBatchesCreateMadeNone() {
    for (String[] proof : new String[][] {{"400", "INVALID_ARGUMENT"}, {"400", "FAILED_PRECONDITION"},
        {"400", "OUT_OF_RANGE"}, {"401", "UNAUTHENTICATED"}, {"403", "PERMISSION_DENIED"}, {"404", "NOT_FOUND"}}) {
      assertTrue(GeminiErrors.certainlyNotCreated(
          new RuntimeException(new ApiException(Integer.parseInt(proof[0]), proof[1], "m"))), String.join(" ", proof));
    }
    for (String[] ambiguous : new String[][] {{"429", "RESOURCE_EXHAUSTED"}, {"503", "UNAVAILABLE"},
        {"500", "INTERNAL"},
        {"504", "DEADLINE_EXCEEDED"}, {"409", "ABORTED"}, {"408", ""}, {"400", ""}, {"403", "X"}, {"404", "null"},
        {"499", "CANCELLED"}}) {
      assertFalse(GeminiErrors.certainlyNotCreated(new ApiException(Integer.parseInt(ambiguous[0]), ambiguous[1], "m")),
          String.join(" ", ambiguous));
    }
    assertFalse(GeminiErrors.certainlyNotCreated(new UncheckedIOException(new SocketTimeoutException())));
  }

  @Test
  void aBadKeyOrProject_isNeverTheDocumentsFault_soNoDocumentIsLostToIt() {
    assertFalse(GeminiErrors.isPermanent(new ApiException(400, "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.")));
    assertFalse(GeminiErrors.isPermanent(new ApiException(400, "FAILED_PRECONDITION",
        "User location is not supported for the API use.")));
    for (int code : new int[] {401, 403, 404, 408, 429, 500, 503}) {
      assertFalse(GeminiErrors.isPermanent(new ApiException(code, "X", "m")), "code " + code);
    }
    assertFalse(GeminiErrors.isPermanent(new IllegalStateException("timeout")));
  }

  @Test
  void numbersBeyond64Bits_becomeDoubles_soTheAnalysisCanBeStored() {
    GenerateContentResponse response = GenerateContentResponse.fromJson(
        """
            {"candidates":[{"content":{"role":"model","parts":[{"text":
              "{\\"total\\": 1000000000000000000000000000000, \\"lineItems\\": [{\\"amount\\": 99999999999999999999}], \\"tax\\": 1.5}"
            }]}}]}""");
    Analysis analysis = InvoiceAnalyzer.interpret("m", response, null);
    assertTrue(analysis.succeeded(), String.valueOf(analysis.failure()));
    assertInstanceOf(Double.class, analysis.invoice().get("total"));
    assertEquals(1e30, (Double) analysis.invoice().get("total"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> items = (List<Map<String, Object>>) analysis.invoice().get("lineItems");
    assertInstanceOf(Double.class, items.get(0).get("amount"));
    assertEquals(1.5, analysis.invoice().get("tax"));
  }

  /** batches.create's refusals: the job's size, one named request, or the whole job (neither). */
  @Test
  void aCreateRefusal_isAboutTheJobsSize_orNamesOneRequest_orNeither() {
    assertTrue(GeminiErrors.tooLarge(new ApiException(413, "", "Request Entity Too Large")));
    assertTrue(GeminiErrors.tooLarge(new ApiException(400, "INVALID_ARGUMENT",
        "Request payload size exceeds the limit: 20971520 bytes.")));
    assertFalse(GeminiErrors.tooLarge(new ApiException(400, "INVALID_ARGUMENT", "API key not valid.")));
    assertFalse(GeminiErrors.tooLarge(new ApiException(429, "RESOURCE_EXHAUSTED", "too large a quota")));

    assertEquals(OptionalInt.of(3), GeminiErrors.refusedRequest(new ApiException(400, "INVALID_ARGUMENT",
        "* BatchGenerateContentRequest.batch.input_config.requests.requests[3].request.contents: contents is not"
            + " specified\n")));
    assertEquals(OptionalInt.empty(), GeminiErrors.refusedRequest(new ApiException(400, "INVALID_ARGUMENT",
        "* …requests.requests[3].request: x\n* …requests.requests[7].request: y\n")), "two named: the job's");
    assertEquals(OptionalInt.empty(), GeminiErrors.refusedRequest(new ApiException(500, "INTERNAL",
        "requests.requests[3]")), "only an outright refusal");
  }
}
