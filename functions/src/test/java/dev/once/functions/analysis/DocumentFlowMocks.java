package dev.once.functions.analysis;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyMap;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.once.budget.Budget;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.TestSignatures;
import dev.once.functions.gathering.BatchSubmitter;
import dev.once.gemini.CostEstimator;
import dev.once.gemini.InvoiceAnalyzer;
import dev.once.gemini.PriceTable;
import dev.once.guard.Once;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.pipeline.DocumentReader;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultPublication;
import dev.once.testing.InMemoryLedger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The document flow's world for unit tests: the in-memory ledger on a clock the test moves, Storage, Gemini and
 * Pub/Sub mocked (a PDF read, a publish answered), so each effect is counted on the mock that would carry it out.
 */
public abstract class DocumentFlowMocks {
  public static final String TOPIC = "projects/p/topics/results";
  static final byte[] PDF = "%PDF-1.4 invoice".getBytes(StandardCharsets.US_ASCII);

  public volatile Instant now = Instant.parse("2026-11-30T10:00:00Z");
  public final InMemoryLedger ledger = new InMemoryLedger(LedgerOptions.defaults(), () -> now);
  final DocumentReader reader = mock(DocumentReader.class);
  public final InvoiceAnalyzer analyzer = mock(InvoiceAnalyzer.class);
  final BatchSubmitter submitter = mock(BatchSubmitter.class);
  public final MessagePublisher publisher = mock(MessagePublisher.class);
  public final RecordQueries queries = mock(RecordQueries.class);
  final CostEstimator estimator = mock(CostEstimator.class);

  public DocumentFlowMocks() {
    try {
      when(reader.read(any(), any(Long.class))).thenReturn(PDF);
      when(publisher.publish(eq(TOPIC), any(), anyMap())).thenReturn("m-1");
    } catch (Exception e) {
      throw new IllegalStateException("stubbing a mock threw", e);
    }
  }

  /** The flow in {@code mode} under {@code budget}, on these mocks (paid calls: 60 s, 3 tries). */
  DocumentFlow flow(DocumentFlow.Mode mode, Budget budget) {
    return flow(mode, budget, ledger);
  }

  /** The same over {@code over} (this world's ledger, or a wrapper of it): another instance, with a cache of its own. */
  DocumentFlow flow(DocumentFlow.Mode mode, Budget budget, Ledger over) {
    Once once = new Once(over);
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    return new DocumentFlow(once, () -> records, () -> queries, budget, () -> estimator, () -> reader,
        () -> analyzer, () -> submitter,
        new ResultPublication(once, () -> publisher, () -> TOPIC, TestSignatures.RESULTS), mode, 1024,
        new DocumentFlow.PaidCalls(Duration.ofSeconds(60), 3));
  }

  static Report handle(DocumentFlow flow, DocumentSource document) {
    return flow.handle(document, DocumentFlow.key(document));
  }
}
