package dev.once.budget;

import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the budget's calls; tests override the call they break or hold. */
class CountingLedger extends ForwardingLedger {
  private final AtomicInteger reads = new AtomicInteger();
  private final AtomicInteger commits = new AtomicInteger();

  CountingLedger(Ledger inner) {
    super(inner);
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    reads.incrementAndGet();
    return super.read(collection, ids);
  }

  /** The day's counters, summed: one read call as {@link #read} is. */
  @Override
  public Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields) {
    reads.incrementAndGet();
    return super.sum(collection, ids, field, value, fields);
  }

  @Override
  public void commit(SideWrites writes) {
    commits.incrementAndGet();
    super.commit(writes);
  }

  int reads() {
    return reads.get();
  }

  int commits() {
    return commits.get();
  }
}
