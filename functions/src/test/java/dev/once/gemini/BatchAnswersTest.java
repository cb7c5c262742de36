package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.types.GenerateContentResponse;
import dev.once.key.IdempotencyKey;
import dev.once.local.gemini.GeminiFixtures;
import java.nio.charset.StandardCharsets;
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
  private static final Function<String, String> REFERENCE = id -> JobNames.reference(GATHERING, id);
  private static final Function<String, String> KEY_TO_ID = key -> IdempotencyKey.of(key).documentId();
  /** google.rpc 13, as python-genai#1341 captured it: retryable. */
  private static final BatchError INTERNAL = BatchResult.fromFile(("{\"key\":\"x\","
      + GeminiFixtures.text("batch-inlined-error-code13.json").strip().substring(1)).getBytes(StandardCharsets.UTF_8),
      "m", null).get(0).error().orElseThrow();
  /** The document's own fault, as sync mode reads a 400 about the document. */
  private static final BatchError UNREADABLE = new BatchError(3, null, "Unable to process input image.");

  private static BatchResult answer(Optional<Integer> key, Optional<Integer> reference) {
    return new BatchResult(key.map(i -> KEYS.get(i).value()), reference.map(i -> REFERENCE.apply(IDS.get(i))),
        Optional.of(new Analysis("gemini-3.5-flash-lite", Map.of(), null, new Usage(1, 1, 2))), Optional.empty());
  }

  private static BatchResult error(int key, BatchError error) {
    return BatchResult.failed(Optional.of(KEYS.get(key).value()), error);
  }

  private static BatchAnswers of(BatchResult... results) {
    return BatchAnswers.of(List.of(results), IDS, BatchAnswers.Rules.REFERENCED, REFERENCE, KEY_TO_ID);
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

  /** The reference is unguessable and new for each job: it proves whose answer it is, wherever it was filed. */
  @Test
  void anAnswerFiledUnderAnotherDocumentsKey_goesToTheDocumentItsReferenceNames() {
    BatchAnswers answers = of(answer(Optional.of(0), Optional.of(1)), answer(Optional.of(1), Optional.of(0)));

    assertEquals(BatchAnswers.Match.REFERENCE_MISFILED,
        assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(0))).match());
    assertEquals(BatchAnswers.Match.REFERENCE_MISFILED,
        assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(1))).match());
    assertEquals(List.of(), answers.unattributed());
  }

  /** Issue 38, item 4: A's error and B's answer filed under each other's keys. */
  @Test
  void anErrorMisfiledUnderAnotherDocumentsKey_failsNobody_andThatDocumentsOwnAnswerIsUsed() {
    BatchAnswers answers = of(error(1, UNREADABLE), answer(Optional.of(0), Optional.of(1)));

    assertEquals(BatchAnswers.Match.REFERENCE_MISFILED,
        assertInstanceOf(BatchAnswers.Answered.class, answers.forDocument(IDS.get(1))).match(), "B's own answer");
    assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(0)), "A runs again, not refused");
    assertEquals(List.of(), answers.unattributed(), "no billed answer thrown away");
  }

  @Test
  void anAnswerWithoutAReferenceUnderNoKey_orTwoNamingOneDocument_isGivenToNone() {
    BatchAnswers keyless = of(answer(Optional.empty(), Optional.empty()));
    assertEquals(1, keyless.unattributed().size(), "billed to the job");

    BatchAnswers two = of(answer(Optional.empty(), Optional.of(1)), answer(Optional.of(1), Optional.of(1)));
    assertEquals("2 answers of the job name it",
        assertInstanceOf(BatchAnswers.Unmatched.class, two.forDocument(IDS.get(1))).reason());
    assertEquals(2, two.unattributed().size());
  }

  /** Issue 38, item 8: billed, it is kept on the document it came under, not thrown away; the document runs again. */
  @Test
  void anUnverifiableAnswerUnderADocumentsOwnKey_isKeptOnIt_unlessTheJobsKeysWereMisfiled() {
    BatchAnswers answers = of(answer(Optional.of(2), Optional.empty()), answer(Optional.of(0), Optional.of(0)));
    BatchAnswers.Unmatched kept = assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(2)));
    assertEquals("the answer filed under its key names no document reference", kept.reason());
    assertTrue(kept.billed().isPresent());
    assertEquals(List.of(), answers.unattributed());

    BatchAnswers misfiled = of(answer(Optional.of(2), Optional.empty()), answer(Optional.of(0), Optional.of(1)));
    BatchAnswers.Unmatched unproven = assertInstanceOf(BatchAnswers.Unmatched.class, misfiled.forDocument(IDS.get(2)));
    assertFalse(unproven.billed().isPresent(), "under a misfiled job's key is no proof: the job's");
    assertEquals(1, misfiled.unattributed().size());
  }

  /** Issue 38, item 3: read by its code, as sync mode reads the same failure of generateContent. */
  @Test
  void aRetryableErrorRunsItsDocumentAgain_andOnlyTheDocumentsOwnFaultRefusesIt() {
    BatchAnswers answers = of(error(0, INTERNAL), error(1, UNREADABLE),
        error(2, new BatchError(3, "INVALID_ARGUMENT", "Request contains an invalid argument.")));

    assertEquals(13, INTERNAL.code());
    BatchAnswers.Unmatched retried = assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(0)));
    assertTrue(retried.reason().startsWith("Gemini answered its request 13 INTERNAL: An internal error"),
        retried.reason());
    assertEquals("Gemini answered its request 3 INVALID_ARGUMENT: Unable to process input image.",
        assertInstanceOf(BatchAnswers.Refused.class, answers.forDocument(IDS.get(1))).reason());
    assertInstanceOf(BatchAnswers.Unmatched.class, answers.forDocument(IDS.get(2)),
        "a generic 400 is a configuration fault a fixed deployment does not have: retried, as in sync mode");
    assertInstanceOf(BatchAnswers.Answered.class, of(error(0, UNREADABLE), answer(Optional.empty(), Optional.of(0)))
        .forDocument(IDS.get(0)), "its own answer wins");
  }

  /** A job made before requests carried references: by key, or its only answer to its only document. */
  @Test
  void aJobWithoutReferences_isMatchedByKey_orItsOnlyAnswerToItsOnlyDocument() {
    BatchResult keyless = new BatchResult(Optional.empty(), Optional.of(new Analysis("m", Map.of(), null,
        new Usage(1, 1, 2))), Optional.empty());

    BatchAnswers one = BatchAnswers.of(List.of(keyless), IDS.subList(0, 1), BatchAnswers.Rules.KEY, null, KEY_TO_ID);
    assertEquals(BatchAnswers.Match.KEY,
        assertInstanceOf(BatchAnswers.Answered.class, one.forDocument(IDS.get(0))).match());
    BatchAnswers two = BatchAnswers.of(List.of(keyless, answer(Optional.of(1), Optional.empty())), IDS.subList(0, 2),
        BatchAnswers.Rules.KEY, null, KEY_TO_ID);
    assertInstanceOf(BatchAnswers.Unmatched.class, two.forDocument(IDS.get(0)));
    assertInstanceOf(BatchAnswers.Answered.class, two.forDocument(IDS.get(1)));
  }

  /**
   * Issue 38, item 7: a gathering of a version that did not mark its requests (in flight at an upgrade) is matched as
   * it was made: an answer naming a reference by it, one naming none by its key — never run again, billed twice, for
   * want of a reference its request never asked for.
   */
  @Test
  void aGatheringMadeBeforeReferences_isMatchedByItsKeysWhereAnAnswerNamesNoReference() {
    List<BatchResult> unreferenced = List.of(answer(Optional.of(0), Optional.empty()),
        answer(Optional.of(1), Optional.empty()), answer(Optional.empty(), Optional.of(2)));

    BatchAnswers legacy = BatchAnswers.of(unreferenced, IDS, BatchAnswers.Rules.LEGACY, REFERENCE, KEY_TO_ID);
    assertEquals(BatchAnswers.Match.KEY,
        assertInstanceOf(BatchAnswers.Answered.class, legacy.forDocument(IDS.get(0))).match());
    assertEquals(BatchAnswers.Match.KEY,
        assertInstanceOf(BatchAnswers.Answered.class, legacy.forDocument(IDS.get(1))).match());
    assertEquals(BatchAnswers.Match.REFERENCE,
        assertInstanceOf(BatchAnswers.Answered.class, legacy.forDocument(IDS.get(2))).match());
    BatchAnswers strict = BatchAnswers.of(unreferenced, IDS, BatchAnswers.Rules.REFERENCED, REFERENCE, KEY_TO_ID);
    assertInstanceOf(BatchAnswers.Unmatched.class, strict.forDocument(IDS.get(0)), "a marked gathering: by proof");
  }

  /**
   * An answer cut short at its token bound is not JSON, yet it starts with its reference (first in the schema's
   * property order): it names its document, and is a failed analysis of it.
   */
  @Test
  void anAnswerCutShort_stillNamesItsDocument() {
    String reference = REFERENCE.apply(IDS.get(0));
    GenerateContentResponse cut =
        GenerateContentResponse.fromJson("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
            + "\"{\\\"documentReference\\\": \\\"" + reference + "\\\", \\\"supplier\\\": \\\"Acme, lines: [\"}]},"
            + "\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":8192}}");

    BatchResult result = BatchResult.answered(Optional.empty(), "gemini-3.5-flash-lite", cut, null);

    assertEquals(Optional.of(reference), result.reference());
    assertEquals(false, result.analysis().orElseThrow().succeeded());
    assertInstanceOf(BatchAnswers.Answered.class, BatchAnswers.of(List.of(result), IDS, BatchAnswers.Rules.REFERENCED,
        REFERENCE, KEY_TO_ID).forDocument(IDS.get(0)));
  }
}
