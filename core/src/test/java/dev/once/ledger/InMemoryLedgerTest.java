package dev.once.ledger;

import dev.once.testing.InMemoryLedger;
import dev.once.testing.LedgerContract;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;

/** The ledger contract, against the in-memory ledger, whose clock the test moves. */
class InMemoryLedgerTest extends LedgerContract {
  private Instant now;
  private InMemoryLedger store;

  @BeforeEach
  void clear() {
    now = Instant.parse("2026-11-30T10:00:00Z");
    InstantSource clock = () -> now;
    store = new InMemoryLedger(LedgerOptions.defaults(), clock);
  }

  @Override
  protected Ledger ledger(Duration lease) {
    return store.withOptions(LedgerOptions.defaults().withLease(lease));
  }

  @Override
  protected void passTime(Duration duration) {
    now = now.plus(duration);
  }

  @Override
  protected Optional<Map<String, Object>> document(String collection, String id) {
    return store.document(collection, id);
  }

  @Override
  protected void put(String collection, String id, Map<String, Object> fields) {
    store.put(collection, id, fields);
  }
}
