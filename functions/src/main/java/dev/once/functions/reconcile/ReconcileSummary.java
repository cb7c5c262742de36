package dev.once.functions.reconcile;

import java.util.LinkedHashMap;
import java.util.Map;

/** What a reconciliation run saw and did ({@link ReconcileFlow}); the HTTP answer. */
public final class ReconcileSummary {
  public int seen;
  public int processed;
  /** Jobs completed before (by the webhook, or an earlier run): the poller's own repeats, not redeliveries. */
  int relisted;
  /** Stray second jobs cancelled while they ran. */
  public int cancelled;
  public int inFlight;
  int pending;
  public int rejected;
  int failed;
  public int tooOld;
  public int pendingChecked;
  int pages;
  /** Deferred documents that went on (analysed, submitted, or refused) because budget was available again. */
  public int deferredResumed;
  /** Batch jobs gathered from queued documents and submitted, and gatherings whose interrupted submission resumed. */
  public int jobsSubmitted;
  public int gatheringsResumed;
  public boolean truncated;

  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("seen", seen);
    map.put("processed", processed);
    map.put("relisted", relisted);
    map.put("cancelled", cancelled);
    map.put("in_flight", inFlight);
    map.put("pending", pending);
    map.put("rejected", rejected);
    map.put("failed", failed);
    map.put("too_old", tooOld);
    map.put("pending_checked", pendingChecked);
    map.put("pages", pages);
    map.put("deferred_resumed", deferredResumed);
    map.put("jobs_submitted", jobsSubmitted);
    map.put("gatherings_resumed", gatheringsResumed);
    map.put("truncated", truncated);
    return map;
  }
}
