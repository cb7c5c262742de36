package dev.once.functions.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import com.google.genai.types.BatchJob;
import com.google.genai.types.JobState;
import dev.once.budget.Budget;
import dev.once.budget.Reservation;
import dev.once.config.Settings;
import dev.once.functions.TestSignatures;
import dev.once.functions.completion.CompletionFlow;
import dev.once.gemini.Analysis;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.BatchResult;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.guard.Once;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.RecordState;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

/**
 * Issue 38, item 6: an analysis an operator runs again (once invalidate) keeps every bill and is notified, whatever
 * mode the pipeline runs in when the re-run comes: run 1 in sync, run 2 in batch; and the other way round.
 */
class RerunAcrossModesTest extends DocumentFlowMocks {
  private static final DocumentSource DOCUMENT =
      new DocumentSource("inbox", "rerun.pdf", 7, "application/pdf", 16, null,
          null);
  private static final IdempotencyKey KEY = DocumentFlow.key(DOCUMENT);
  private static final String JOB = "batches/rerun-job";
  private static final Analysis ANALYSED = new Analysis("gemini-3.5-flash-lite", Map.of("total", 1.0), null,
      new Usage(10, 5, 15));

  private final BatchJobs batchJobs = mock(BatchJobs.class);
  private final Gatherings gatherings = mock(Gatherings.class);

  private CompletionFlow completion() {
    Once once = new Once(ledger);
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    return new CompletionFlow(once, () -> batchJobs, () -> records, () -> queries, () -> gatherings,
        new ResultPublication(once, () -> publisher, () -> TOPIC, TestSignatures.RESULTS), 3, () -> now);
  }

  /** A one-document job answering the document, as its submission recorded it (run and reservation included). */
  private void jobAnswers(Analysis analysis) {
    BatchJob job = BatchJob.builder().name(JOB).state(new JobState(JobState.Known.JOB_STATE_SUCCEEDED)).build();
    Map<String, Object> queued = ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow();
    int run = queued.get(RecordWrites.RERUN) instanceof Number n ? n.intValue() : 1;
    when(batchJobs.find(JOB)).thenReturn(Optional.of(job));
    when(queries.submittedTo(JOB)).thenReturn(List.of(new RecordQueries.Submitted(KEY, DOCUMENT, Reservation.NONE,
        null, null, 0, null, List.of(), run)));
    when(batchJobs.results(job)).thenReturn(List.of(new BatchResult(Optional.of(KEY.value()), Optional.of(analysis),
        Optional.empty())));
  }

  private List<String> publishedKeys() {
    @SuppressWarnings("unchecked")
    ArgumentCaptor<Map<String, String>> attributes = ArgumentCaptor.forClass(Map.class);
    verify(publisher, org.mockito.Mockito.atLeastOnce()).publish(eq(TOPIC), any(), attributes.capture());
    return attributes.getAllValues().stream().map(a -> a.get("idempotency_key")).toList();
  }

  @Test
  void aSyncAnalysis_runAgainInBatchMode_keepsItsFirstBill_andIsPublishedAsRunTwo() {
    when(analyzer.analyse(any(), anyString())).thenReturn(ANALYSED);
    handle(flow(DocumentFlow.Mode.SYNC, Budget.NONE), DOCUMENT);
    assertEquals(false, ledger.document(RecordWrites.BILLING, KEY.documentId()).orElseThrow().get("batch"));

    ledger.invalidate(KEY, Effects.ANALYSE, 1, "alice", "a new model");
    ledger.invalidate(KEY, Effects.PUBLISH, 1, "alice", "a new model");
    handle(flow(DocumentFlow.Mode.BATCH, Budget.NONE), DOCUMENT);
    assertEquals(2L, ledger.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow().get(RecordWrites.RERUN),
        "queued as run 2");
    jobAnswers(ANALYSED);
    completion().complete(GeminiCompletionKeys.ofName(JOB));

    assertEquals(false, ledger.document(RecordWrites.BILLING, KEY.documentId()).orElseThrow().get("batch"),
        "run 1's bill kept");
    Map<String, Object> second = ledger.document(RecordWrites.BILLING, KEY.rerun(2).documentId()).orElseThrow();
    assertEquals(List.of(true, 2L), List.of(second.get("batch"), second.get(RecordWrites.RERUN)));
    assertEquals(List.of(KEY.value(), KEY.rerun(2).value()), publishedKeys(), "a new result for the receiver");
    assertEquals(RecordState.DONE, ledger.lookup(KEY, Effects.PUBLISH).orElseThrow().state(),
        "the document's publish record, moved by the invalidation, finished by the re-run");
  }

  @Test
  void aBatchAnalysis_runAgainInSyncMode_isPublishedAsRunTwo() {
    handle(flow(DocumentFlow.Mode.BATCH, Budget.NONE), DOCUMENT);
    jobAnswers(ANALYSED);
    completion().complete(GeminiCompletionKeys.ofName(JOB));

    ledger.invalidate(KEY, Effects.ANALYSE, 1, "alice", "a new model");
    when(analyzer.analyse(any(), anyString())).thenReturn(ANALYSED);
    handle(flow(DocumentFlow.Mode.SYNC, Budget.NONE), DOCUMENT);

    assertTrue(ledger.document(RecordWrites.BILLING, KEY.documentId()).isPresent(), "run 1's bill kept");
    assertEquals(false, ledger.document(RecordWrites.BILLING, KEY.rerun(2).documentId()).orElseThrow().get("batch"));
    assertEquals(List.of(KEY.value(), KEY.rerun(2).value()), publishedKeys());
    verify(publisher, times(2)).publish(anyString(), any(), anyMap());
  }
}
