package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.once.config.Settings;
import dev.once.gemini.Analysis;
import dev.once.gemini.PriceTable;
import dev.once.gemini.Usage;
import dev.once.key.IdempotencyKey;
import dev.once.testing.InMemoryLedger;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * With RECORDS_RETENTION_DAYS, every analysis and bill carries expireAt (its last write plus the retention), which a
 * Firestore TTL policy deletes it by (terraform/firestore.tf); without it, none: they are kept.
 */
class RecordsRetentionTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/a.pdf#1");
  private static final DocumentSource SOURCE =
      new DocumentSource("inbox", "a.pdf", 1, "application/pdf", 10, null, null);
  private static final Analysis ANALYSED =
      new Analysis("gemini-3.5-flash-lite", Map.of("total", 1), null, new Usage(1, 1, 2));
  private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");
  private final PriceTable prices = PriceTable.fromSettings(Settings.of(Map.of()));

  @Test
  void analysesAndBills_carryExpireAt_onlyWithARetention() {
    InMemoryLedger kept = new InMemoryLedger();
    kept.commit(new RecordWrites(prices).analysed(KEY, SOURCE, ANALYSED, null));
    assertFalse(
        kept.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow().containsKey(RecordWrites.EXPIRE_AT));
    assertFalse(
        kept.document(RecordWrites.BILLING, KEY.documentId()).orElseThrow().containsKey(RecordWrites.EXPIRE_AT));

    InMemoryLedger expiring = new InMemoryLedger();
    RecordWrites records = new RecordWrites(prices, Optional.of(Duration.ofDays(90)), InstantSource.fixed(NOW));
    expiring.commit(records.analysed(KEY, SOURCE, ANALYSED, null));
    Instant expected = NOW.plus(Duration.ofDays(90));
    assertEquals(expected,
        expiring.document(RecordWrites.ANALYSES, KEY.documentId()).orElseThrow().get(RecordWrites.EXPIRE_AT));
    assertEquals(expected,
        expiring.document(RecordWrites.BILLING, KEY.documentId()).orElseThrow().get(RecordWrites.EXPIRE_AT));
    expiring.commit(records.rejected(IdempotencyKey.of("gcs:inbox/b.txt#1"), SOURCE, "type"));
    assertEquals(expected, expiring.document(RecordWrites.ANALYSES, IdempotencyKey.of("gcs:inbox/b.txt#1").documentId())
        .orElseThrow().get(RecordWrites.EXPIRE_AT));
  }
}
