package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.google.genai.types.GenerateContentResponse;
import dev.once.key.IdempotencyKey;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** How a job's answers are filed to its documents: by the reference they name, never by position. */
class BatchAnswersTest {
  private static final String GATHERING = "00112233445566778899aabbccddeeff";
  private static final List<IdempotencyKey> KEYS = List.of(IdempotencyKey.of("gcs:inbox/a.pdf#1"),
      IdempotencyKey.of("gcs:inbox/b.pdf#1"), IdempotencyKey.of("gcs:inbox/c.pdf#1"));
  private static final List<String> IDS = KEYS.stream().map(IdempotencyKey::documentId).toList();
  private static final Function<String, String> REFERENCE = id -> BatchJobs.reference(GATHERING, id);
  private static final Function<String, String> KEY_TO_ID = key -> IdempotencyKey.of(key).documentId();

  private static BatchResult answer(Optional<Integer> key, Optional<Integer> reference) {
    return new BatchResult(key.map(i -> KEYS.get(i).value()), reference.map(i -> REFERENCE.apply(IDS.get(i))),
        Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of(), null, new Usage(1, 1, 2))), Optional.empty());
  }

  private static BatchAnswers of(BatchResult... results) {
    return BatchAnswers.of(List.of(results), IDS, REFERENCE, KEY_TO_ID);
  }

  @Test
  void anAnswer_goesToTheDocumentItsReferenceNames_underItsKeyOrUnderNone() {
    BatchAnswers answers = of(answer(Optional.empty(), Optional.of(2)), answer(Optional.of(0), Optional.of(0)));

    assertEquals(BatchAnswers.Match.KEY_AND_REFERENCE,
        assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(0))).match());
    assertEquals(BatchAnswers.Match.REFERENCE,
        assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(2))).match());
    assertEquals("no answer of the job names it",
        assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(1))).reason());
    assertEquals(List.of(), answers.unattributed());
  }

  @Test
  void anAnswerWhoseKeyAndReferenceDisagree_orWithoutAReference_isGivenToNoDocument() {
    BatchAnswers answers = of(answer(Optional.of(0), Optional.of(1)), answer(Optional.of(2), Optional.empty()));

    assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(0)));
    assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(1)));
    assertEquals("the answer filed under its key names no document reference",
        assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(2))).reason());
    assertEquals(2, answers.unattributed().size(), "both billed to the job");
  }

  @Test
  void twoAnswersNamingOneDocument_areGivenToNeither() {
    BatchAnswers answers = of(answer(Optional.empty(), Optional.of(1)), answer(Optional.of(1), Optional.of(1)));

    assertEquals("2 answers of the job name it",
        assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(1))).reason());
    assertEquals(2, answers.unattributed().size());
  }

  /** Gemini's own error for a request carries no reference: it is the document's whose key it came under, if any. */
  @Test
  void anError_refusesTheDocumentWhoseKeyItCameUnder_unlessThatDocumentHasItsOwnAnswer() {
    BatchResult refusal = new BatchResult(Optional.of(KEYS.get(0).value()), Optional.empty(), Optional.of("error 400"));
    BatchResult keyless = new BatchResult(Optional.empty(), Optional.empty(), Optional.of("error 500"));

    BatchResult misfiledRefusal = new BatchResult(Optional.of(KEYS.get(1).value()), Optional.empty(),
        Optional.of("error 400"));

    BatchAnswers answers = of(refusal, keyless, misfiledRefusal, answer(Optional.empty(), Optional.of(1)));

    assertEquals("error 400", assertInstanceOf(BatchAnswers.Refused.class, answers.forDocument(IDS.get(0))).reason());
    assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(1)), "its own answer wins");
    assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(2)), "a keyless error is nobody's");
  }

  /** A job made before requests carried references: by key, or its only answer to its only document. */
  @Test
  void aJobWithoutReferences_isMatchedByKey_orItsOnlyAnswerToItsOnlyDocument() {
    BatchResult keyless = new BatchResult(Optional.empty(), Optional.of(new Analysis("m", Map.of(), null,
        new Usage(1, 1, 2))), Optional.empty());

    BatchAnswers one = BatchAnswers.of(List.of(keyless), IDS.subList(0, 1), null, KEY_TO_ID);
    assertEquals(BatchAnswers.Match.KEY,
        assertInstanceOf(BatchAnswers.Answered.class, one.forDocument(IDS.get(0))).match());
    BatchAnswers two = BatchAnswers.of(List.of(keyless, answer(Optional.of(1), Optional.empty())), IDS.subList(0, 2),
        null, KEY_TO_ID);
    assertInstanceOf(BatchAnswers.Unmatched.class, two.forDocument(IDS.get(0)));
    assertInstanceOf(BatchAnswers.Answered.class, two.forDocument(IDS.get(1)));
  }

  /**
   * An answer cut short at its token bound is not JSON, yet it starts with its reference (first in the schema's
   * property order): it names its document, and is a failed analysis of it.
   */
  @Test
  void anAnswerCutShort_stillNamesItsDocument() {
    String reference = REFERENCE.apply(IDS.get(0));
    GenerateContentResponse cut = GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
        + "\"{\\\"documentReference\\\": \\\"" + reference + "\\\", \\\"supplier\\\": \\\"Acme, lines: [\"}]},"
        + "\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":8192}}");

    BatchResult result = BatchResult.answered(Optional.empty(), "gemini-3.5-flash-lite", cut, null);

    assertEquals(Optional.of(reference), result.reference());
    assertEquals(false, result.analysis().orElseThrow().succeeded());
    assertInstanceOf(BatchAnswers.Answered.class,
        BatchAnswers.of(List.of(result), IDS, REFERENCE, KEY_TO_ID).forDocument(IDS.get(0)));
  }
}
